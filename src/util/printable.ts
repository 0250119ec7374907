/**
 * `text` as it may be echoed in an error: at most `max` characters, control and invalid
 * characters as '?'. A binary file passed by mistake must not fill the terminal with its bytes or
 * send escape sequences to it. `keepLines` keeps tabs and line breaks, for a parser's message
 * that quotes the offending line under a caret.
 */
export function printable(text: string, max = 120, keepLines = false): string {
  // One regex per directive: a formatter that wraps a longer line would leave a regex off it.
  // eslint-disable-next-line no-control-regex
  const all = /[\u0000-\u001f\u007f-\u009f\ufffd]/g;
  // eslint-disable-next-line no-control-regex
  const allButNewlines = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\ufffd]/g;
  const clean = text.replace(keepLines ? allButNewlines : all, '?');
  return clean.length > max ? `${clean.slice(0, max)}... (${clean.length} characters)` : clean;
}

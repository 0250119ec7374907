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

/* eslint-disable no-control-regex */
/** C0 and C1 controls, DEL, and the bidirectional overrides and isolates (text shown out of order). */
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
/** The same without tab and line feed. */
const CONTROLS_BUT_LINES = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
/* eslint-enable no-control-regex */

/** `\x1b` for a character up to U+00FF, `\u202e` above. */
const visible = (c: string): string => {
  const code = c.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
};

/**
 * Text from a job (its log, a failure reason, an event, a name) as it may be written to a
 * terminal: every control character (escape sequences: title changes, OSC 52 clipboard writes,
 * screen clears, cursor moves; carriage returns that overwrite a line; C1 controls; bidi
 * overrides) is shown as a visible escape such as `\x1b`, so nothing the job wrote can act on the
 * terminal of whoever reads it. Nothing is cut. `keepLines` keeps line feeds and tabs (a log
 * tail); otherwise the text stays on one line. The backslash itself is not escaped: the four
 * characters `\x1b` written by a job read the same as an escaped ESC, which is harmless.
 */
export function terminalText(text: string, keepLines = false): string {
  return text.replace(keepLines ? CONTROLS_BUT_LINES : CONTROLS, visible);
}

/**
 * `JSON.stringify(value, null, 2)` with the characters a terminal may act on that JSON leaves
 * raw (DEL, C1 controls, bidi controls) written as `\uXXXX` escapes: the same JSON value.
 */
export function terminalJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(
    /[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

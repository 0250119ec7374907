/**
 * A bounded look at JSON text before it is parsed (pure). JSON.parse and a schema walk take time
 * in proportion to the entries of a document, synchronously: a 3 MB body of 200,000 keys held
 * the event loop for seconds. One linear pass over the characters, without building anything,
 * counts the entries of every object and array and stops at the first bound exceeded, so an
 * oversized document is refused in microseconds and what gets parsed is bounded by `total`.
 * Malformed text is not judged here (JSON.parse does that afterwards); the pass never fails on it.
 */

/** How large a document may be, in entries. */
export interface JsonBounds {
  /** Nesting depth of objects and arrays. */
  depth: number;
  /** Keys of one object. */
  keys: number;
  /** Elements of one array. */
  items: number;
  /** Entries (keys and elements) of the whole document. */
  total: number;
}

interface Open {
  object: boolean;
  /** Entries so far (separators seen + the first entry). */
  entries: number;
  /** The key (object) or index (array) of the entry being read, for the message. */
  at: string;
  /** Inside an object, the next string is a key. */
  expectKey: boolean;
}

const QUOTE = 34;
const BACKSLASH = 92;
const MAX_KEY_CHARS = 40;

/**
 * What is larger than `bounds` in the JSON text, as `path: more than N keys`, or undefined when
 * nothing is. Linear in the characters up to the first bound exceeded.
 */
export function jsonBoundsProblem(text: string, bounds: JsonBounds): string | undefined {
  const stack: Open[] = [];
  let total = 0;
  const path = () =>
    stack
      .map((o) => o.at)
      .filter((a) => a !== '')
      .join('.') || '(body)';
  // Counts a new entry of the innermost container; a message when it is one too many.
  const entry = (): string | undefined => {
    const top = stack[stack.length - 1];
    if (!top) return undefined;
    top.entries++;
    if (!top.object) top.at = String(top.entries - 1);
    if (++total > bounds.total) return `${path()}: the document has more than ${bounds.total} entries in all`;
    const max = top.object ? bounds.keys : bounds.items;
    if (top.entries > max) {
      stack[stack.length - 1] = { ...top, at: '' };
      return `${path()}: more than ${max} ${top.object ? 'keys' : 'elements'}`;
    }
    return undefined;
  };
  // Whether the innermost container still waits for its first entry (after `{` or `[`).
  let fresh = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 32 || c === 10 || c === 13 || c === 9) continue;
    const top = stack[stack.length - 1];
    if (fresh && c !== 125 && c !== 93) {
      fresh = false;
      const problem = entry();
      if (problem) return problem;
    }
    if (c === QUOTE) {
      // Skip the string (a backslash escapes the next character); remember it when it is a key.
      const start = i + 1;
      let end = text.indexOf('"', start);
      while (end !== -1) {
        let slashes = 0;
        while (text.charCodeAt(end - 1 - slashes) === BACKSLASH) slashes++;
        if (slashes % 2 === 0) break;
        end = text.indexOf('"', end + 1);
      }
      if (end === -1) return undefined;
      if (top?.object && top.expectKey) {
        top.at = text.slice(start, Math.min(end, start + MAX_KEY_CHARS));
        top.expectKey = false;
      }
      i = end;
    } else if (c === 123 || c === 91) {
      // { or [
      if (stack.length >= bounds.depth) return `${path()}: nested deeper than ${bounds.depth} levels`;
      stack.push({ object: c === 123, entries: 0, at: '', expectKey: c === 123 });
      fresh = true;
    } else if (c === 125 || c === 93) {
      // } or ]
      stack.pop();
      fresh = false;
    } else if (c === 44 && top) {
      // , : the next entry of the innermost container
      if (top.object) top.expectKey = true;
      const problem = entry();
      if (problem) return problem;
    }
  }
  return undefined;
}

/**
 * Incremental splitter for one large JSON object of the shape `{"k": v, ..., "traceEvents": [e, ...], ...}`,
 * or for a bare array `[e, ...]` (the legacy chrome-trace form written by torch 1.x's profiler).
 *
 * It never holds the whole document: each element of the streamed array and each other top-level
 * value is cut out as text and handed to `JSON.parse` (native, fast) one at a time, so memory is
 * bounded by the largest single element plus one input chunk. Keys may come in any order.
 */

/** What the splitter reports; both callbacks run synchronously inside `feed`. */
export interface SplitterSink {
  /** One parsed element of the streamed array (e.g. one trace event). */
  onElement(value: unknown): void;
  /** One other top-level member, parsed; `undefined` when larger than `maxMetaChars`. */
  onMember(key: string, value: unknown): void;
}

type Mode = 'start' | 'key' | 'colon' | 'value' | 'comma' | 'array' | 'array-comma' | 'done';

const QUOTE = 34;
const BACKSLASH = 92;

/**
 * Feeds text chunks; throws `SyntaxError` on malformed structure. `finish()` reports whether the
 * top-level object was closed (a truncated file still yields every complete element before it).
 */
export class TopLevelSplitter {
  private buf = '';
  private pos = 0;
  private mode: Mode = 'start';
  private key = '';
  // Scanner state for the value currently being cut out (survives chunk boundaries).
  private valueStart = -1;
  private depth = 0;
  private inString = false;
  private escaped = false;
  private scalar = false;
  private skipping = false;

  constructor(
    private readonly sink: SplitterSink,
    private readonly arrayKey = 'traceEvents',
    private readonly maxMetaChars = 16 * 1024 * 1024,
  ) {}

  /** Consumes one chunk of text. */
  feed(chunk: string): void {
    // Drop what was consumed, keeping the value being cut out (if any).
    const keepFrom = this.valueStart >= 0 ? this.valueStart : this.pos;
    this.buf = this.buf.slice(keepFrom) + chunk;
    this.pos -= keepFrom;
    if (this.valueStart >= 0) this.valueStart = 0;
    this.run(false);
  }

  /** Ends the input; returns true when the document was complete. */
  finish(): boolean {
    this.run(true);
    return this.mode === 'done';
  }

  private run(atEnd: boolean): void {
    const s = this.buf;
    while (this.pos < s.length || (atEnd && this.valueStart >= 0 && this.scalar)) {
      if (this.valueStart >= 0) {
        if (!this.scanValue(s, atEnd)) return;
        continue;
      }
      const c = s.charCodeAt(this.pos);
      if (c === 32 || c === 10 || c === 13 || c === 9) {
        this.pos++;
        continue;
      }
      switch (this.mode) {
        case 'start':
          if (c === 91) {
            this.bareArray = true;
            this.mode = 'array';
            this.pos++;
            break;
          }
          if (c !== 123) throw new SyntaxError('expected a JSON object or array');
          this.mode = 'key';
          this.pos++;
          break;
        case 'key':
          if (c === 125) {
            this.mode = 'done';
            this.pos++;
            break;
          }
          if (c === 44) {
            this.pos++;
            break;
          }
          if (c !== QUOTE) throw new SyntaxError('expected an object key');
          this.beginValue(false);
          break;
        case 'colon':
          if (c !== 58) throw new SyntaxError('expected ":"');
          this.mode = 'value';
          this.pos++;
          break;
        case 'value':
          if (this.key === this.arrayKey && c === 91) {
            this.mode = 'array';
            this.pos++;
            break;
          }
          this.beginValue(false);
          break;
        case 'comma':
          if (c === 44) {
            this.mode = 'key';
            this.pos++;
            break;
          }
          if (c === 125) {
            this.mode = 'done';
            this.pos++;
            break;
          }
          throw new SyntaxError('expected "," or "}"');
        case 'array':
          if (c === 93) {
            this.mode = this.bareArray ? 'done' : 'comma';
            this.pos++;
            break;
          }
          this.beginValue(true);
          break;
        case 'array-comma':
          if (c === 44) {
            this.mode = 'array';
            this.pos++;
            break;
          }
          if (c === 93) {
            this.mode = this.bareArray ? 'done' : 'comma';
            this.pos++;
            break;
          }
          throw new SyntaxError('expected "," or "]" in the event array');
        case 'done':
          this.pos = s.length;
          return;
      }
    }
  }

  private inArray = false;
  /** True when the document is a bare array of events rather than an object holding one. */
  bareArray = false;

  private beginValue(inArray: boolean): void {
    const c = this.buf.charCodeAt(this.pos);
    this.inArray = inArray;
    this.valueStart = this.pos;
    this.depth = 0;
    this.inString = false;
    this.escaped = false;
    this.scalar = !(c === 123 || c === 91 || c === QUOTE);
    this.skipping = false;
  }

  /** Advances over the current value; returns false when more input is needed. */
  private scanValue(s: string, atEnd: boolean): boolean {
    let i = this.pos;
    const n = s.length;
    if (this.scalar) {
      while (i < n) {
        const c = s.charCodeAt(i);
        if (c === 44 || c === 125 || c === 93 || c === 32 || c === 10 || c === 13 || c === 9) break;
        i++;
      }
      if (i === n && !atEnd) {
        this.pos = i;
        return false;
      }
      this.complete(s, i);
      return true;
    }
    let depth = this.depth;
    let inString = this.inString;
    let escaped = this.escaped;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (inString) {
        if (escaped) escaped = false;
        else if (c === BACKSLASH) escaped = true;
        else if (c === QUOTE) {
          inString = false;
          if (depth === 0) {
            i++;
            break;
          }
        }
        continue;
      }
      if (c === QUOTE) inString = true;
      else if (c === 123 || c === 91) depth++;
      else if (c === 125 || c === 93) {
        depth--;
        if (depth === 0) {
          i++;
          break;
        }
      }
    }
    this.depth = depth;
    this.inString = inString;
    this.escaped = escaped;
    const closed = depth === 0 && !inString && i > this.valueStart;
    if (!closed || (i === n && (depth !== 0 || inString))) {
      this.pos = i;
      if (!this.inArray && this.mode !== 'key' && i - this.valueStart > this.maxMetaChars) this.skipping = true;
      return false;
    }
    this.complete(s, i);
    return true;
  }

  private complete(s: string, end: number): void {
    const start = this.valueStart;
    this.valueStart = -1;
    this.pos = end;
    if (this.inArray) {
      this.sink.onElement(JSON.parse(s.slice(start, end)));
      this.mode = 'array-comma';
      return;
    }
    if (this.mode === 'key') {
      this.key = JSON.parse(s.slice(start, end)) as string;
      this.mode = 'colon';
      return;
    }
    this.sink.onMember(this.key, this.skipping ? undefined : JSON.parse(s.slice(start, end)));
    this.mode = 'comma';
  }
}

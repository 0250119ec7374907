/**
 * Reading a job spec file with bounded work (issue 47 item 11): the file's size is checked before
 * it is read (a 50 MB file was read whole, 1.9 GB of memory, before the size error), and the
 * entries of the document are counted before it is parsed (the YAML parser's check of unique keys
 * is quadratic: 20,000 keys took 7 s, 100,000 never ended). The parse itself runs without that
 * check, and duplicate keys are found afterwards in one pass.
 */
import { isMap, isScalar, LineCounter, parseDocument, visit } from 'yaml';
import { GoodputError } from '../core/errors.js';
import { jsonBoundsProblem } from '../core/json-bounds.js';
import { readBoundedText, sizeWords } from '../util/bounded-file.js';
import { printable } from '../util/printable.js';

/**
 * Largest spec file read: a spec carries at most 512 KiB of arguments and variables and 64 KiB
 * of env_setup (core/job-spec.ts SPEC_LIMITS), so 1 MiB leaves room for the YAML around them.
 */
export const SPEC_FILE_MAX_BYTES = 1 << 20;

/**
 * Most lines and commas of a YAML spec (an upper bound of its entries, in block and flow style):
 * a spec has at most 4096 arguments and 256 variables. Parsing this many takes well under a second.
 */
export const SPEC_YAML_MAX_ENTRIES = 20_000;

/** Bounds of a spec written as JSON (checked in one pass before JSON.parse). */
const JSON_BOUNDS = { depth: 16, keys: 1024, items: 10_000, total: 50_000 };

/** The text of a spec file, refused (E_SPEC) before it is read when larger than SPEC_FILE_MAX_BYTES; E_INPUT when unreadable. */
export function readSpecText(path: string): string {
  const read = readBoundedText(path, SPEC_FILE_MAX_BYTES);
  if ('text' in read) return read.text;
  if (read.refused === 'too-large')
    throw new GoodputError(
      'E_SPEC',
      `job spec ${path} is ${read.size}; a spec file is at most ${sizeWords(SPEC_FILE_MAX_BYTES)} (is this the right file?)`,
    );
  throw new GoodputError(
    'E_INPUT',
    `cannot read job spec ${path}: ${read.refused === 'unreadable' ? read.message : read.refused}`,
  );
}

/** Lines plus commas of `text`: at least its number of YAML entries. */
function entryBound(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  for (let i = text.indexOf(','); i !== -1; i = text.indexOf(',', i + 1)) n++;
  return n;
}

/**
 * The document of a spec file's text (YAML or JSON), parsed with bounded work. E_SPEC when it is
 * too large in entries, not YAML/JSON, or a mapping repeats a key.
 */
export function parseSpecText(text: string, path: string): unknown {
  if (/^\s*\{/.test(text)) {
    const problem = jsonBoundsProblem(text, JSON_BOUNDS);
    if (problem !== undefined)
      throw new GoodputError(
        'E_SPEC',
        `${path} is invalid: ${printable(problem)} (a spec has at most 256 env variables and 4096 arguments)`,
      );
    try {
      return JSON.parse(text) as unknown;
    } catch {
      // YAML's flow style ({name: x}) is not JSON: read below.
    }
  }
  const entries = entryBound(text);
  if (entries > SPEC_YAML_MAX_ENTRIES) {
    throw new GoodputError(
      'E_SPEC',
      `${path} is invalid: it has ${entries} lines and commas, more than the ` +
        `${SPEC_YAML_MAX_ENTRIES} a job spec may have (at most 256 env variables and 4096 ` +
        `arguments); is this the right file?`,
    );
  }
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { uniqueKeys: false, lineCounter });
  const error = doc.errors[0];
  // The parser quotes the offending line with a caret: kept for a text file, but a binary file
  // passed by mistake must not send its bytes (escape sequences) to the terminal.
  if (error) throw new GoodputError('E_SPEC', `${path}: not valid YAML/JSON: ${printable(error.message, 600, true)}`);
  visit(doc, {
    Map(_, map) {
      if (!isMap(map)) return;
      const seen = new Set<string>();
      for (const pair of map.items) {
        if (!isScalar(pair.key)) continue;
        const key = String(pair.key.value);
        if (seen.has(key)) {
          const line = pair.key.range ? lineCounter.linePos(pair.key.range[0]).line : '?';
          throw new GoodputError(
            'E_SPEC',
            `${path}: not valid YAML/JSON: the key '${printable(key, 60)}' appears twice in one mapping (line ${line}); keep one`,
          );
        }
        seen.add(key);
      }
    },
  });
  return doc.toJS({ maxAliasCount: 100 });
}

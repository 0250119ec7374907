/** CSV errors quote what they found, but never a binary file's bytes in full. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GoodputError } from '../core/errors.js';
import { parseCsv } from './csv.js';

describe('parseCsv reads files as users export them', () => {
  it('takes quoted cells (a comma inside one), a byte-order mark, mixed line ends and blank lines', () => {
    const text = '\ufeffname , time,application\r\n"job, one",0,"cifar10"\n\n   \r\n"say ""hi""",5,bert\r\n';
    const table = parseCsv(text, 'w.csv', ['name', 'time', 'application']);
    assert.deepEqual(table.header, ['name', 'time', 'application']);
    assert.deepEqual(
      table.rows.map((r) => r.cells),
      [
        ['job, one', '0', 'cifar10'],
        ['say "hi"', '5', 'bert'],
      ],
    );
    assert.deepEqual(
      table.rows.map((r) => r.line),
      [2, 5],
    );
    assert.equal(table.column('application'), 2);
  });
});

describe('parseCsv errors', () => {
  it('names the line of an unclosed quote', () => {
    assert.throws(
      () => parseCsv('name,time\nx,1\n"y,2\n', 'w.csv', ['name']),
      (error: unknown) => {
        assert.ok(error instanceof GoodputError && error.code === 'E_INPUT');
        assert.match(error.message, /w\.csv:3: not a valid CSV file: Quote Not Closed/);
        return true;
      },
    );
  });

  it('names the line of a row with too few cells', () => {
    assert.throws(
      () => parseCsv('name,time\n\nx\n', 'w.csv'),
      /w\.csv:3: expected 2 comma-separated values \(name,time\), got 1/,
    );
  });

  it('names the missing column and quotes a readable header as it is', () => {
    assert.throws(
      () => parseCsv('name,time\nx,1\n', 'w.csv', ['name', 'time', 'application']),
      (error: unknown) => {
        assert.ok(error instanceof GoodputError && error.code === 'E_INPUT');
        assert.match(
          error.message,
          /w\.csv:1: missing column 'application' \(header is 'name,time'; expected columns name,time,application\)/,
        );
        return true;
      },
    );
  });

  it('quotes a binary header short and without control characters', () => {
    const binary = String.fromCharCode(...Array.from({ length: 3000 }, (_, i) => (i * 37) % 256)) + '\x1b[2J';
    assert.throws(
      () => parseCsv(binary, 'bin.dat', ['name']),
      (error: unknown) => {
        assert.ok(error instanceof GoodputError);
        assert.ok(error.message.length < 400, `${error.message.length} characters`);
        assert.doesNotMatch(error.message, /[\u0000-\u001f\u007f-\u009f]/); // eslint-disable-line no-control-regex
        assert.match(error.message, /\.\.\. \(\d+ characters\)'; expected columns name/);
        return true;
      },
    );
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { commands } from './commands.js';

describe('command list', () => {
  it('names every command once, and each entry loads the command of its own name', async () => {
    assert.equal(new Set(commands.map((c) => c.name)).size, commands.length);
    for (const entry of commands) {
      const command = await entry.load();
      assert.equal(command.name, entry.name);
      assert.ok(entry.summary.length > 0 && !entry.summary.includes('\n'), entry.name);
      assert.match(command.help, /^Usage: goodput /, entry.name);
    }
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { goodputErrorOf } from '../../test-support/sim/goodput-error.js';
import { goodputPolicy } from './goodput/index.js';
import { fifoPolicy } from './fifo.js';
import { parsePolicyParams } from './policy-params.js';

describe('parsePolicyParams', () => {
  it('parses numbers, infinity and booleans by the type of each default', () => {
    const params = parsePolicyParams(goodputPolicy, [
      'rank_exponent=3',
      'max_horizon_s=inf',
      'whole_nodes=false',
      'explore_factor= 2.5',
    ]);
    assert.deepEqual(params, { rank_exponent: 3, max_horizon_s: Infinity, whole_nodes: false, explore_factor: 2.5 });
    assert.deepEqual(parsePolicyParams(goodputPolicy, []), {});
  });

  it('the last assignment of a knob wins', () => {
    assert.deepEqual(parsePolicyParams(goodputPolicy, ['rank_exponent=3', 'rank_exponent=5']), { rank_exponent: 5 });
  });

  it('rejects unknown knobs, naming the valid ones', () => {
    const error = goodputErrorOf(() => parsePolicyParams(goodputPolicy, ['rank_exp=3']));
    assert.equal(error.code, 'E_BAD_POLICY_PARAM');
    assert.equal(error.exitCode, 2);
    assert.match(error.message, /'rank_exp' is not a parameter of policy 'goodput'; valid: .*rank_exponent/);
    // Inherited object members are not knobs.
    assert.match(goodputErrorOf(() => parsePolicyParams(goodputPolicy, ['toString=1'])).message, /not a parameter/);
  });

  it('rejects bad values with the expected form', () => {
    assert.match(
      goodputErrorOf(() => parsePolicyParams(goodputPolicy, ['rank_exponent'])).message,
      /expected rank_exponent=VALUE \(default 3\)/,
    );
    assert.match(
      goodputErrorOf(() => parsePolicyParams(goodputPolicy, ['rank_exponent='])).message,
      /expected rank_exponent=VALUE/,
    );
    assert.match(
      goodputErrorOf(() => parsePolicyParams(goodputPolicy, ['rank_exponent=-1'])).message,
      /non-negative number/,
    );
    assert.match(
      goodputErrorOf(() => parsePolicyParams(goodputPolicy, ['rank_exponent=abc'])).message,
      /non-negative number/,
    );
    assert.match(goodputErrorOf(() => parsePolicyParams(goodputPolicy, ['whole_nodes=yes'])).message, /true or false/);
    // Knobs with their own bounds: a job must be able to start, and to keep what it has run at.
    assert.match(
      goodputErrorOf(() => parsePolicyParams(goodputPolicy, ['initial_replicas=0'])).message,
      /initial_replicas must be an integer >= 1 \(default 1\)/,
    );
    assert.match(
      goodputErrorOf(() => parsePolicyParams(goodputPolicy, ['initial_replicas=1.5'])).message,
      /must be an integer >= 1/,
    );
    assert.match(
      goodputErrorOf(() => parsePolicyParams(goodputPolicy, ['initial_replicas=inf'])).message,
      /must be an integer >= 1/,
    );
    assert.match(
      goodputErrorOf(() => parsePolicyParams(goodputPolicy, ['explore_factor=0.5'])).message,
      /explore_factor must be a number >= 1 \(default 4\)/,
    );
    assert.deepEqual(parsePolicyParams(goodputPolicy, ['initial_replicas=4', 'explore_factor=1']), {
      initial_replicas: 4,
      explore_factor: 1,
    });
    // A share: both ends included, nothing beyond.
    assert.match(
      goodputErrorOf(() => parsePolicyParams(goodputPolicy, ['unmeasured_gain_share=1.5'])).message,
      /unmeasured_gain_share must be a number from 0 to 1 \(default 0.75\)/,
    );
    assert.match(
      goodputErrorOf(() => parsePolicyParams(goodputPolicy, ['unmeasured_gain_share=inf'])).message,
      /from 0 to 1/,
    );
    assert.deepEqual(parsePolicyParams(goodputPolicy, ['unmeasured_gain_share=0', 'unmeasured_gain_share=1']), {
      unmeasured_gain_share: 1,
    });
  });

  it('a policy without knobs accepts none, and says so', () => {
    assert.deepEqual(parsePolicyParams(fifoPolicy, []), {});
    assert.match(
      goodputErrorOf(() => parsePolicyParams(fifoPolicy, ['a=1'], '--goodput-param')).message,
      /^--goodput-param a=1: policy 'fifo' has no tunable parameters/,
    );
  });

  it('every goodput knob default round-trips', () => {
    const assignments = Object.entries(goodputPolicy.params ?? {}).map(([name, value]) => `${name}=${String(value)}`);
    assert.deepEqual(parsePolicyParams(goodputPolicy, assignments), goodputPolicy.params);
  });
});

import { GoodputError } from '../core/errors.js';
import type { PolicyFactory, PolicyParamValue } from './policy.js';

/**
 * Parses `NAME=VALUE` assignments (given as `flag`, `--policy-param` by default) into overrides
 * of `factory`'s knobs. A knob whose default is a number takes a number >= 0, or within its
 * `param_bounds` (`inf` and `Infinity` allowed unless it must be an integer or has a max); one whose
 * default is a boolean takes `true` or `false`. Throws E_BAD_POLICY_PARAM (exit 2) naming the
 * assignment and the valid knobs; never returns a knob the factory does not list.
 */
export function parsePolicyParams(
  factory: PolicyFactory,
  assignments: readonly string[],
  flag = '--policy-param',
): Record<string, PolicyParamValue> {
  const knobs = factory.params ?? {};
  const names = Object.keys(knobs);
  const fail = (message: string): GoodputError => new GoodputError('E_BAD_POLICY_PARAM', message, 2);
  const params: Record<string, PolicyParamValue> = {};
  for (const assignment of assignments) {
    const eq = assignment.indexOf('=');
    const name = eq < 0 ? assignment : assignment.slice(0, eq);
    const text = eq < 0 ? '' : assignment.slice(eq + 1).trim();
    if (names.length === 0) throw fail(`${flag} ${assignment}: policy '${factory.name}' has no tunable parameters.`);
    const fallback = Object.hasOwn(knobs, name) ? knobs[name] : undefined;
    if (fallback === undefined)
      throw fail(
        `${flag} ${assignment}: '${name}' is not a parameter of policy '${factory.name}'; valid: ${names.join(', ')}.`,
      );
    if (eq < 0 || text === '')
      throw fail(`${flag} ${assignment}: expected ${name}=VALUE (default ${String(fallback)}).`);
    if (typeof fallback === 'boolean') {
      if (text !== 'true' && text !== 'false') throw fail(`${flag} ${assignment}: ${name} must be true or false.`);
      params[name] = text === 'true';
    } else {
      const value = /^[+]?inf(inity)?$/i.test(text) ? Infinity : Number(text);
      const bound = factory.param_bounds?.[name] ?? { min: 0 };
      const max = bound.max ?? Infinity;
      if (
        Number.isNaN(value) ||
        value < bound.min ||
        value > max ||
        (bound.integer === true && !Number.isInteger(value))
      ) {
        const kind =
          bound.integer === true
            ? 'an integer'
            : bound.min === 0 && max === Infinity
              ? 'a non-negative number'
              : 'a number';
        const range = max < Infinity ? ` from ${bound.min} to ${max}` : bound.min > 0 ? ` >= ${bound.min}` : '';
        throw fail(`${flag} ${assignment}: ${name} must be ${kind}${range} (default ${String(fallback)}).`);
      }
      params[name] = value;
    }
  }
  return params;
}

/**
 * How a job's script scales its learning rate with the batch (the SDK's resolved scaling rule,
 * docs/sdk.md): AdaScale for SGD-like optimizers, its square root ('adamscale') for Adam and
 * AdamW; 'custom' for a callable. Kept apart from the wire schemas (core/wire.ts, zod) so that
 * what only shows a rule, e.g. `goodput show`, loads no schema library.
 */
export const LR_RULES = ['adascale', 'adamscale', 'linear', 'sqrt', 'none', 'custom'] as const;
/** See {@link LR_RULES}. */
export type LrRule = (typeof LR_RULES)[number];

/** The learning-rate rule in words, for events and `goodput show`. */
export const LR_RULE_WORDS: Readonly<Record<LrRule, string>> = {
  adascale: 'AdaScale',
  adamscale: 'square root of AdaScale, for Adam',
  linear: 'linear',
  sqrt: 'square root',
  none: 'not scaled',
  custom: "the script's own rule, predicted here as AdaScale",
};

/** Sharing a cluster between people (issue 48): shares files, entitlements, the policy layer, usage. */
export {
  DEFAULT_HALF_LIFE_S,
  NO_SHARES,
  parseShares,
  quotaTypeProblem,
  teamOf,
  teamShare,
  type SharesConfig,
} from './config.js';
export { entitle, fairShareFactors, waterFill, type Entitlements, type UserDemand } from './entitle.js';
export { jobDemand, withShares, type SharesKnobs } from './layer.js';
export { advanceUsage, type Holding } from './usage.js';
export { sharesView, type TeamView, type TypedHolding } from './view.js';

/**
 * Events of the live verdicts across ranks and the device marks they feed
 * (control/ranks/rank-watch.ts; Store.recordEvent): a straggling rank, a hung rank (with the
 * ranks' stacks), a device marked slow or drained for placement.
 */
export type RankEventKind = 'straggler' | 'rank-hung' | 'device-marked';

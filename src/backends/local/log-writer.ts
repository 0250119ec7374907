/**
 * The log cap at write time (issue 47 item 6). A replica's output goes through a pipe to a small
 * writer process of its own, started by the replica's wrapper, never through the server: a
 * server killed with kill -9 leaves its replicas and their writers running and writing, and a
 * restarted server adopts them as before. The writer is the log's only writer, so when the log
 * reaches its cap it cuts the oldest part off and counts it, and no line is lost in between: the
 * replica blocks on the pipe (64 KiB) while the cut is made. The writer:
 *
 * - runs in its own session (`setsid`) so that the signals sent to the replica's process group
 *   (SIGTERM to checkpoint, SIGKILL at the deadline) do not stop it before it has written what
 *   the replica wrote last, and ignores SIGTERM/SIGINT/SIGHUP;
 * - does not carry the replica's markers (containment.ts), so the sweep of escaped processes
 *   does not kill it in the middle of a cut; it ends when the pipe has no writer left (the
 *   replica and whatever it started and the sweep killed);
 * - copies in pieces with `head -c` (unbuffered by `stdbuf -o0`, so each read is written at
 *   once and `goodput logs -f` sees output as it comes), and when the log holds `cap` bytes keeps its newest half after a first
 *   line that says how many bytes and lines were dropped so far;
 * - writes the totals dropped to the run file `<base>.log-dropped` ("BYTES LINES"), read by the
 *   server for the job's event (datadir/log-drops.ts), and `<base>.log-done` when it ended, which
 *   the wrapper waits for (at most 2 s) before it records its exit, so that the exit's log tail
 *   (failure hints, `goodput show`) holds the replica's last lines.
 *
 * Only POSIX sh, coreutils (head, tail, tee, wc, mv, stdbuf) and setsid are used: a writer per replica
 * costs a shell, not a Node process. The log never exceeds its cap by more than 4 KiB and its first line.
 */
import { readFileSync } from 'node:fs';

/** Smallest cap applied (a cap under a few lines would cut at every write): 64 KiB. */
export const LOG_CAP_MIN_BYTES = 64 << 10;

/** The writer, a constant script: `sh -c LOG_WRITER goodput-log LOG CAP BASE`, the pipe on stdin. */
export const LOG_WRITER = [
  'log=$1; cap=$2; p=$3; trap "" TERM INT HUP; umask 077',
  'keep=$((cap / 2)); dropped=0; lines=0; head_bytes=0',
  // head writes through stdio, which holds a pipe's output back until 4 KiB: unbuffered, each read is written at once.
  'sb=; command -v stdbuf > /dev/null && sb="stdbuf -o0"',
  'size=$(($(wc -c < "$log" 2>/dev/null || echo 0)))',
  'while :; do',
  '  if [ "$size" -ge "$cap" ]; then',
  // The cut part holds the previous first line (ours): it is not counted as the job's.
  '    cut=$((size - keep)); n=$(($(head -c "$cut" "$log" | wc -l)))',
  '    if [ "$head_bytes" -gt 0 ]; then cut=$((cut - head_bytes)); n=$((n - 1)); fi',
  '    dropped=$((dropped + cut)); lines=$((lines + n))',
  '    tail -c "$keep" "$log" > "$p.log-tail"',
  '    h="[goodput: $dropped bytes ($lines lines) of this log were dropped to keep it under ' +
    'its limit of $cap bytes (goodput up --log-limit-mb); the newest part follows]"',
  '    head_bytes=$((${#h} + 1))',
  '    { printf "%s\\n" "$h"; cat "$p.log-tail"; } > "$log"; rm -f "$p.log-tail"',
  '    echo "$dropped $lines" > "$p.log-dropped.tmp" && mv -f "$p.log-dropped.tmp" "$p.log-dropped"',
  '    size=$(($(wc -c < "$log")))',
  '  fi',
  '  room=$((cap - size)); [ "$room" -lt 4096 ] && room=4096',
  // tee goes on past a write error (a full disk): the bytes read are counted, the pipe is drained.
  '  n=$(($($sb head -c "$room" | tee -a "$log" 2>/dev/null | wc -c)))',
  '  [ "$n" -lt "$room" ] && break',
  '  size=$(($(wc -c < "$log" 2>/dev/null || echo $((size + n)))))',
  'done',
  ': > "$p.log-done"',
].join('\n');

/**
 * The wrapper's lines that start the writer and send the wrapper's (and so the command's) output
 * to it; `$lw` is the writer script, `$log` and `$cap` the log and its cap (0: no writer, the log
 * is written directly). Without mkfifo the output goes to the log directly, uncapped.
 */
export const START_WRITER = [
  'w=; if [ "$cap" -gt 0 ] && rm -f "$p.fifo" && mkfifo -m 600 "$p.fifo"; then',
  '  env -u GOODPUT_JOB_ID -u RANK setsid /bin/sh -c "$lw" goodput-log "$log" "$cap" "$p" < "$p.fifo" > /dev/null 2>&1 & w=$!',
  '  exec > "$p.fifo" 2>&1; rm -f "$p.fifo"',
  'fi',
].join('\n');

/** The wrapper's lines after the command ended: its end of the pipe closed, the writer given 2 s to finish. */
export const AWAIT_WRITER = [
  'if [ -n "$w" ]; then exec > /dev/null 2>&1; i=0',
  '  while [ ! -e "$p.log-done" ] && [ $i -lt 40 ]; do sleep 0.05; i=$((i + 1)); done',
  'fi',
].join('\n');

/** Run files of the writer, removed before a launch (suffixes of the run file base). */
export const WRITER_FILES = [
  '.fifo',
  '.log-tail',
  '.log-dropped',
  '.log-dropped.tmp',
  '.log-dropped.reported',
  '.log-done',
];

/** What the writer of `base` dropped so far (bytes and lines), or undefined while nothing was. */
export function readLogDrop(base: string): { bytes: number; lines: number } | undefined {
  try {
    const [bytes, lines] = readFileSync(base + '.log-dropped', 'utf8')
      .trim()
      .split(' ')
      .map(Number);
    return Number.isFinite(bytes) && Number.isFinite(lines) ? { bytes: bytes!, lines: lines! } : undefined;
  } catch {
    return undefined;
  }
}

/** Horovod timelines (Chrome-trace JSON arrays, possibly unterminated). */
import { horovodFindings } from '../findings/comm-findings.js';
import { looksLikeHorovodTimeline, parseHorovodTimeline, type HorovodTimeline } from '../parse/horovod-timeline.js';
import { inputRow, readTextInput } from './handler.js';

export const horovodInput = inputRow<HorovodTimeline>({
  kind: 'horovod-timeline',
  detect: (head) => head.startsWith('[') && looksLikeHorovodTimeline(head),
  async parse(file, warn) {
    const text = await readTextInput(file, 'horovod-timeline');
    if (typeof text !== 'string') return text;
    const timeline = parseHorovodTimeline(text);
    if (timeline.truncated)
      warn(`${file.path}: Horovod timeline is not terminated (job running or killed); analysed the complete events`);
    return timeline;
  },
  findings: (timeline, file) => horovodFindings(timeline, file.path),
  summarize(timeline, _file, parts) {
    parts.horovod.push(timeline);
  },
});

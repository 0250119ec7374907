/** Step breakdowns exported by the Goodput SDK (JSON object, or a bare array of steps). */
import { stepBreakdownFindings } from '../findings/step-findings.js';
import { looksLikeHorovodTimeline } from '../parse/horovod-timeline.js';
import { parseStepBreakdown, type StepBreakdown } from '../parse/step-breakdown.js';
import { inputRow, readTextInput } from './handler.js';

export const stepBreakdownInput = inputRow<StepBreakdown>({
  kind: 'step-breakdown',
  detect: (head) =>
    (head.startsWith('{') && /"kind"\s*:\s*"goodput\.step_breakdown"/.test(head)) ||
    (head.startsWith('[') &&
      !looksLikeHorovodTimeline(head) &&
      /"data_wait_s"\s*:/.test(head) &&
      /"forward_backward_s"\s*:/.test(head)),
  async parse(file) {
    const text = await readTextInput(file, 'step-breakdown');
    return typeof text === 'string' ? parseStepBreakdown(JSON.parse(text)) : text;
  },
  findings: (b, file) => stepBreakdownFindings(b, file.path),
  summarize(b, _file, parts) {
    parts.steps.push(...b.steps);
  },
});

/** Prometheus exposition files from the GPU exporters (nvidia_gpu_exporter, dcgm-exporter). */
import { nvidiaSmiFindings } from '../findings/smi-findings.js';
import type { GpuSample } from '../parse/nvidia-smi/gpu-sample.js';
import { gpuSamplesFromExposition, looksLikeExposition, parseExposition } from '../parse/prometheus.js';
import { summarizeGpus } from '../summarize-gpus.js';
import { inputRow, notJsonObject, readTextInput } from './handler.js';

export const prometheusInput = inputRow<GpuSample[]>({
  kind: 'prometheus-metrics',
  detect: notJsonObject(looksLikeExposition),
  async parse(file) {
    const text = await readTextInput(file, 'prometheus-metrics');
    if (typeof text !== 'string') return text;
    const metrics = parseExposition(text);
    const source = metrics.some((m) => m.name.startsWith('DCGM_FI_')) ? 'dcgm-exporter' : 'nvidia_gpu_exporter';
    const samples = gpuSamplesFromExposition(metrics, source);
    if (samples.length === 0)
      return {
        skip: `${file.path}: Prometheus metrics without GPU exporter metrics (nvidia_smi_*, DCGM_FI_*); skipped`,
      };
    return samples;
  },
  findings: (samples, file) => nvidiaSmiFindings({ samples, processes: [] }, file.path),
  summarize(samples, file, parts) {
    parts.gpu_samples.push(...samples);
    parts.gpus.push(...summarizeGpus(samples, file.path));
  },
});

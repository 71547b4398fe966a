// Sizes, times and frames as the analyzer's text prints them.

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

// "0 B", "512 B", "1.50 KiB": like common/size_units.h format_size.
export function formatSize(bytes) {
  if (bytes === null || bytes === undefined) return 'not known';
  let value = Number(bytes), unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) { value /= 1024; unit += 1; }
  if (unit === 0) return `${value} B`;
  return `${value.toFixed(value >= 100 ? 0 : value >= 10 ? 1 : 2)} ${UNITS[unit]}`;
}

// Nanoseconds since the trace started, in ns, µs, ms or s.
export function formatTime(ns) {
  const t = Number(ns);
  if (t < 1e3) return `${Math.round(t)} ns`;
  if (t < 1e6) return `${+(t / 1e3).toFixed(2)} µs`;
  if (t < 1e9) return `${+(t / 1e6).toFixed(3)} ms`;
  return `${+(t / 1e9).toFixed(3)} s`;
}

function basename(path) {
  return path.slice(path.lastIndexOf('/') + 1);
}

// "train_step (train.cu:57)", a Python frame "train.py:57 in train_step": as report/stack_text.h frame_text.
export function frameText(frame) {
  if (frame.kind === 'truncated') return '… (truncated)';
  if (frame.kind === 'python') return `${basename(frame.file || '?')}:${frame.line ?? 0} in ${frame.function}`;
  const where = frame.file ? ` (${basename(frame.file)}:${frame.line})` : frame.module ? ` (${basename(frame.module)})` : '';
  return `${frame.function}${where}`;
}

// The three innermost frames, joined by " ← ".
export function compactStack(frames) {
  if (!frames.length) return '(no stack)';
  return frames.slice(0, 3).map(frameText).join(' ← ') + (frames.length > 3 ? ' ← …' : '');
}

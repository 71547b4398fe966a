// Stacks merged into trees: for the flame graph (callers first) and for the collapsible trees of the
// leaks, growth and OOM live sets (allocating frame first, then its callers). Stacks can be hundreds of
// frames deep (a PyTorch snapshot's, a recursion's): both trees fold the frames beyond a depth into one
// node, and are built and drawn without recursion, so a deep stack never overflows the JavaScript stack
// or nests the page's elements past what the browser lays out.
import { formatSize, frameText } from './format.js';

// The flame graph keeps this many outermost and innermost frames of a deeper stack.
const kFlameOuter = 32;
const kFlameInner = 64;
// The collapsible trees nest this many frames; the callers beyond are listed flat under one line.
const kNestedFrames = 48;

// d3-flame-graph's data: {name, value, children}, the outermost frame at the root.
export function flameTree(sites, total) {
  const root = { name: 'all', value: total, children: [] };
  for (const site of sites) {
    let path = site.other ? [`${site.other} smaller stacks`] : [...site.frames].reverse().map(frameText);
    if (path.length === 0) path.push('(no stack)');
    if (path.length > kFlameOuter + kFlameInner + 1)
      path = [...path.slice(0, kFlameOuter), `… ${path.length - kFlameOuter - kFlameInner} frames folded`,
        ...path.slice(-kFlameInner)];
    let node = root;
    for (const name of path) {
      let child = node.children.find((c) => c.name === name);
      if (!child) node.children.push((child = { name, value: 0, children: [] }));
      child.value += site.bytes;
      node = child;
    }
  }
  return root;
}

// Nested <details>: each level one frame, from the allocating one out to its callers, with the bytes and
// allocations of the stacks below it. `el` makes elements (report.js).
export function stackTree(sites, el) {
  const root = { children: new Map() };
  for (const site of sites) {
    const frames = (site.stack.length ? site.stack : [{ function: '(no stack)' }]).map(frameText);
    const nested = frames.slice(0, kNestedFrames);
    const rest = frames.slice(kNestedFrames);
    let node = root;
    for (const [i, name] of nested.entries()) {
      const key = i === nested.length - 1 && rest.length ? `${name}\n${rest.join('\n')}` : name;
      if (!node.children.has(key))
        node.children.set(key, { name, bytes: 0, allocations: 0, children: new Map(), folded: key === name ? [] : rest });
      node = node.children.get(key);
      node.bytes += site.bytes;
      node.allocations += site.allocations ?? 0;
    }
  }
  const top = el('div', { class: 'tree' });
  const work = [{ children: root.children, list: top, depth: 0 }];
  while (work.length) {
    const { children, list, depth } = work.pop();
    const sorted = [...children.values()].sort((a, b) => b.bytes - a.bytes);
    for (const node of sorted) {
      const label = el('span', {}, el('b', {}, formatSize(node.bytes)),
        node.allocations ? ` ${node.allocations}× ` : ' ', depth ? '← ' : '', node.name);
      if (node.children.size === 0 && node.folded.length === 0) {
        list.append(el('div', { class: 'leaf' }, label));
        continue;
      }
      const details = el('details', depth === 0 && sorted.length <= 3 ? { open: '' } : {}, el('summary', {}, label));
      if (node.folded.length) {
        details.append(el('div', { class: 'tree' }, el('details', {},
          el('summary', {}, `… ${node.folded.length} more callers`),
          el('ol', { class: 'folded' }, ...node.folded.map((name) => el('li', {}, `← ${name}`))))));
      } else {
        const inner = el('div', { class: 'tree' });
        details.append(inner);
        work.push({ children: node.children, list: inner, depth: depth + 1 });
      }
      list.append(details);
    }
  }
  return top;
}

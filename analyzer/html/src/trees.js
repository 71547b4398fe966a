// Stacks merged into trees: for the flame graph (callers first) and for the collapsible trees of the
// leaks, growth and OOM live sets (allocating frame first, then its callers).
import { formatSize, frameText } from './format.js';

// d3-flame-graph's data: {name, value, children}, the outermost frame at the root.
export function flameTree(sites, total) {
  const root = { name: 'all', value: total, children: [] };
  for (const site of sites) {
    const path = site.other ? [`${site.other} smaller stacks`] : [...site.frames].reverse().map(frameText);
    if (path.length === 0) path.push('(no stack)');
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
    let node = root;
    for (const frame of site.stack.length ? site.stack : [{ function: '(no stack)' }]) {
      const name = frameText(frame);
      if (!node.children.has(name)) node.children.set(name, { bytes: 0, allocations: 0, children: new Map() });
      node = node.children.get(name);
      node.bytes += site.bytes;
      node.allocations += site.allocations ?? 0;
    }
  }
  const render = (children, depth) => {
    const list = el('div', { class: 'tree' });
    const sorted = [...children.entries()].sort((a, b) => b[1].bytes - a[1].bytes);
    for (const [name, node] of sorted) {
      const label = el('span', {}, el('b', {}, formatSize(node.bytes)),
        node.allocations ? ` ${node.allocations}× ` : ' ', depth ? '← ' : '', name);
      if (node.children.size === 0) {
        list.append(el('div', { class: 'leaf' }, label));
        continue;
      }
      const details = el('details', depth === 0 && sorted.length <= 3 ? { open: '' } : {}, el('summary', {}, label));
      details.append(render(node.children, depth + 1));
      list.append(details);
    }
    return list;
  };
  return render(root.children, 0);
}

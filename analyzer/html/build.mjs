// Bundles the page's front end into one script and one style sheet for the analyzer to inline:
//   node build.mjs NODE_MODULES OUT_DIR
// NODE_MODULES is where `npm ci` put the packages of package-lock.json (the build tree, not the sources).
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const [nodeModules, out] = process.argv.slice(2);
const here = dirname(fileURLToPath(import.meta.url));
const esbuild = createRequire(join(nodeModules, 'x.js'))('esbuild');

await esbuild.build({
  entryPoints: [join(here, 'src', 'report.js')],
  bundle: true,
  minify: true,
  format: 'iife',
  target: 'es2020',
  nodePaths: [nodeModules],
  outfile: join(out, 'report.js'),
  legalComments: 'eof',
  logLevel: 'warning',
});

// The packages' own style sheets (not in their "exports"), then ours.
const css = [
  join(nodeModules, 'uplot', 'dist', 'uPlot.min.css'),
  join(nodeModules, 'd3-flame-graph', 'dist', 'd3-flamegraph.css'),
  join(here, 'src', 'report.css'),
].map((file) => readFileSync(file, 'utf8')).join('\n');
const { code } = await esbuild.transform(css, { loader: 'css', minify: true });
writeFileSync(join(out, 'report.css'), code);

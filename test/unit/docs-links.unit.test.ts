import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/config/env';

// A link between our Markdown pages is only useful while it leads somewhere: a page moved or a
// heading renamed (docs/relay.md's measurements went to docs/measurements/, for one) must take
// every link to it along. Anchors are checked the way GitHub makes them from headings.

// Folders that hold no Markdown of ours: installed packages, build output, the local stack's
// cache, quick benchmark results (ignored by git) and git itself.
const SKIPPED_DIRS = new Set(['node_modules', 'dist', '.cache', '.git', path.join('tools', 'bench', 'results', 'quick')]);

function markdownFiles(dir = ''): string[] {
  return fs.readdirSync(path.join(PROJECT_ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) return SKIPPED_DIRS.has(rel) || SKIPPED_DIRS.has(entry.name) ? [] : markdownFiles(rel);
    return entry.isFile() && entry.name.endsWith('.md') ? [rel] : [];
  });
}

// The lines outside fenced code blocks, with their 1-based numbers: a `#` or a `](` inside a code
// block is neither a heading nor a link.
function proseLines(text: string): { line: string; n: number }[] {
  const out: { line: string; n: number }[] = [];
  let fence: string | undefined;
  text.split('\n').forEach((line, i) => {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence !== undefined) {
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
    } else if (marker !== undefined) {
      fence = marker;
    } else {
      out.push({ line, n: i + 1 });
    }
  });
  return out;
}

// The text GitHub renders for a heading: code spans keep their text without the backticks;
// elsewhere links and images become their text, and HTML tags and emphasis markers go.
function headingText(raw: string): string {
  return raw
    .split(/(`[^`]*`)/)
    .map((part, i) =>
      i % 2 === 1
        ? part.slice(1, -1)
        : part
            .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
            .replace(/<[^>]+>/g, '')
            .replace(/(^|[^\p{L}\p{N}])[*_]+|[*_]+(?=[^\p{L}\p{N}]|$)/gu, '$1'),
    )
    .join('')
    .trim();
}

// GitHub's slug of a heading's rendered text, made unique within the page as GitHub does
// (github-slugger, the package GitHub's own renderer follows: a slug already taken gets -1, -2, …);
// and any explicit HTML id or name.
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const slugger = new GithubSlugger!();
  for (const { line } of proseLines(markdown)) {
    for (const m of line.matchAll(/<a\s[^>]*\b(?:id|name)="([^"]+)"/g)) anchors.add(m[1]!);
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line);
    if (heading) anchors.add(slugger.slug(headingText(heading[1]!)));
  }
  return anchors;
}

// Inline links and images, `[text](target)` or `[text](target "title")`, outside code spans.
function linksIn(markdown: string): { target: string; line: number }[] {
  return proseLines(markdown).flatMap(({ line, n }) =>
    [...line.replace(/`[^`]*`/g, '').matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g)].map((m) => ({ target: m[1]!, line: n })),
  );
}

// What is wrong with one link, or undefined: a missing file, or an anchor no heading makes.
function brokenReason(fromFile: string, target: string, pages: Map<string, Set<string>>): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined; // http:, https:, mailto:, …: not ours to check
  const hash = target.indexOf('#');
  const filePart = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
  const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
  const resolved = filePart === '' ? fromFile : filePart.startsWith('/') ? filePart.slice(1) : path.join(path.dirname(fromFile), filePart);
  if (!fs.existsSync(path.join(PROJECT_ROOT, resolved))) return `no file ${resolved}`;
  if (anchor === undefined || anchor === '' || !resolved.endsWith('.md')) return undefined;
  let anchors = pages.get(path.normalize(resolved));
  if (!anchors) {
    anchors = anchorsOf(fs.readFileSync(path.join(PROJECT_ROOT, resolved), 'utf8'));
    pages.set(path.normalize(resolved), anchors);
  }
  return anchors.has(anchor) ? undefined : `no heading in ${resolved} makes #${anchor}`;
}

// github-slugger is an ES module; this file is CommonJS, so it is loaded once before the tests.
let GithubSlugger: typeof import('github-slugger', { with: { 'resolution-mode': 'import' } }).default | undefined;

describe('Markdown links (unit)', () => {
  before(async () => {
    GithubSlugger = (await import('github-slugger')).default;
  });

  it('makes anchors as GitHub does', () => {
    const githubSlug = (heading: string) => [...anchorsOf(`# ${heading}`)][0];
    assert.equal(githubSlug('Waking from idle, and the drain grace (`npm run bench:relay-wake`)'), 'waking-from-idle-and-the-drain-grace-npm-run-benchrelay-wake');
    assert.equal(githubSlug('Order per key — the argument, and where it can break'), 'order-per-key--the-argument-and-where-it-can-break');
    assert.equal(githubSlug('From 0.54× to 0.70× of the 2026-12-03 code'), 'from-054-to-070-of-the-2026-12-03-code');
    assert.equal(githubSlug('Latency: outbox commit → balance credited (`npm run bench:pipeline`)'), 'latency-outbox-commit--balance-credited-npm-run-benchpipeline');
    assert.equal(githubSlug('kafkajs\'s encoder'), 'kafkajss-encoder');
    assert.equal(githubSlug('Größe und Ärger'), 'größe-und-ärger');
    assert.equal(githubSlug('snake_case `RELAY_SHARDS`'), 'snake_case-relay_shards');
    const anchors = anchorsOf('# Title\n## Runs\n```\n# not a heading\n```\n## Runs\n### Runs\n');
    assert.deepEqual([...anchors], ['title', 'runs', 'runs-1', 'runs-2']);
  });

  it('finds links outside code, with or without an anchor or a title', () => {
    const links = linksIn('See [a](a.md) and [b](b.md#x "title").\n`[not](c.md)`\n```\n[not](d.md)\n```\n![chart](e.png)\n');
    assert.deepEqual(links, [{ target: 'a.md', line: 1 }, { target: 'b.md#x', line: 1 }, { target: 'e.png', line: 6 }]);
  });

  it('every relative link in our Markdown leads to a file, and every anchor to a heading', () => {
    const files = markdownFiles();
    assert.ok(files.includes('README.md') && files.includes(path.join('docs', 'relay.md')), `Markdown found: ${files.join(', ')}`);
    const pages = new Map<string, Set<string>>();
    const broken: string[] = [];
    let checked = 0;
    for (const file of files) {
      for (const { target, line } of linksIn(fs.readFileSync(path.join(PROJECT_ROOT, file), 'utf8'))) {
        checked += 1;
        const reason = brokenReason(file, target, pages);
        if (reason) broken.push(`${file}:${line}: (${target}): ${reason}`);
      }
    }
    assert.ok(checked >= 50, `links checked: ${checked}`);
    assert.equal(broken.length, 0, `broken links:\n${broken.join('\n')}`);
  });
});

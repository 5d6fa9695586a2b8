#!/usr/bin/python3
"""corpus.py -- a templated English corpus about cats, mice, rivers, money and banks.

The corpus exists to teach a tiny Transformer one thing worth looking at: the two senses of
"bank". Every sentence that mentions a bank goes on after it, and the word right after "bank"
depends only on its sense:

    river sense:  ... bank where the fish swim / where the ducks swim / where the grass grows ...
    money sense:  ... bank to get a loan / to pay the rent / to open an account ...

The clues to the sense come BEFORE "bank", so a model that reads the sentence up to "bank" must
look back at them:

    river clues:  river ("the river bank", "she sees the river and walks to the bank"), fish
    money clues:  money, coins

Everything else is deliberately uninformative. Subjects (the cat, the mice, she, ...), verbs
(walks, sleeps, puts, keeps, ...) and prepositions (by, near, in, on, at, to, from) are drawn
from the same lists for both senses, and one bank sentence in five has no clue at all, with a
continuation of either sense at random ("the cat walks by the bank ..."). So "river" and "money"
are reliable clues; "cat", "in" and "by" are not. A third of the sentences have no bank at all
(the cat eats the mouse, the mice sleep in the house, ...) to give the model ordinary English
around the lesson.

    from corpus import make_corpus, tokenize
    sents = make_corpus(4000, seed=0)   # list of (sentence, sense) with sense "river", "money",
                                        # "none" (a bank without clue) or "" (no bank)

Run it to print a sample:  /usr/bin/python3 scripts/train/corpus.py --n 20
"""
import argparse
import random

# The tokenizer of Stepformer (DESIGN.md): ASCII-lowercase, split on ASCII whitespace and ASCII
# punctuation, punctuation dropped.
_SEPARATORS = set(" \t\n\v\f\r" + "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def tokenize(text):
    toks, cur = [], []
    for c in text:
        c = chr(ord(c) + 32) if "A" <= c <= "Z" else c
        if c in _SEPARATORS:
            if cur:
                toks.append("".join(cur))
                cur = []
        else:
            cur.append(c)
    if cur:
        toks.append("".join(cur))
    return toks


# (subject, plural?)
SUBJECTS = [("the cat", False), ("a cat", False), ("the cats", True), ("the mouse", False),
            ("a mouse", False), ("the mice", True), ("the dog", False), ("the dogs", True),
            ("she", False), ("he", False), ("they", True), ("the man", False),
            ("the woman", False), ("the girl", False), ("the boy", False)]

PREPOSITIONS = ["by", "near", "in", "on", "at", "to", "from"]
_STILL = ["by", "near", "in", "on", "at"]  # where one sleeps, sits, keeps things

# verbs without an object, (singular, plural, the prepositions that read well after them)
INTRANSITIVE = [("walks", "walk", PREPOSITIONS), ("runs", "run", PREPOSITIONS),
                ("sleeps", "sleep", _STILL), ("sits", "sit", _STILL), ("waits", "wait", _STILL),
                ("plays", "play", _STILL), ("rests", "rest", _STILL), ("eats", "eat", _STILL)]
MOVING = INTRANSITIVE[:2]  # "she walks with money to the bank"

# verbs with an object; the same list serves both senses, so no verb is a clue
TRANSITIVE = [("finds", "find", _STILL), ("sees", "see", _STILL), ("hides", "hide", _STILL),
              ("drops", "drop", _STILL), ("keeps", "keep", _STILL), ("puts", "put", _STILL),
              ("has", "have", _STILL), ("takes", "take", PREPOSITIONS),
              ("brings", "bring", ["to", "near", "by"]), ("gets", "get", ["from", "at", "near"])]

# what the clue word can be, per sense (the object of a transitive verb)
OBJECTS = {"river": ["fish", "the fish", "the river"], "money": ["money", "coins", "the money"]}

# the words after "bank": only these carry the sense forward
CONTINUATIONS = {
    "river": ["where the fish swim", "where the ducks swim", "where the grass grows",
              "where the water is cold"],
    "money": ["to get a loan", "to pay the rent", "to open an account", "to buy a house"],
}

# sentences without a bank
PLACES = ["house", "garden", "tree", "road", "park", "river", "box"]
FOODS = ["mouse", "fish", "bread", "cheese"]
FOODS_PLURAL = {"mouse": "mice"}


def _verb(pair, plural):
    return pair[1] if plural else pair[0]


def bank_sentence(rng, sense):
    """One sentence with "bank"; sense is "river", "money" or "none" (no clue before bank)."""
    subj, pl = rng.choice(SUBJECTS)
    vi, vt, vm = rng.choice(INTRANSITIVE), rng.choice(TRANSITIVE), rng.choice(MOVING)
    if sense == "none":  # "the cat walks by the bank"
        head = f"{subj} {_verb(vi, pl)} {rng.choice(vi[2])} the bank"
        cont_sense = rng.choice(["river", "money"])
    else:
        cont_sense = sense
        obj = rng.choice(OBJECTS[sense])
        if obj == "the river":
            vt = rng.choice(TRANSITIVE[:2])  # finds, sees
        kind = rng.randrange(4) if sense == "river" else rng.randrange(1, 4)
        if kind == 0:  # the modifier: "the cat sleeps by the river bank"
            head = f"{subj} {_verb(vi, pl)} {rng.choice(vi[2])} the river bank"
        elif kind == 1:  # the object: "she puts money in the bank", "he sees the river by the bank"
            head = f"{subj} {_verb(vt, pl)} {obj} {rng.choice(vt[2])} the bank"
        elif kind == 2:  # with: "she walks with money to the bank"
            obj = "the fish" if obj == "the river" else obj
            head = f"{subj} {_verb(vm, pl)} with {obj} {rng.choice(vm[2])} the bank"
        else:  # a clue further back: "she sees the river and walks to the bank"
            head = f"{subj} {_verb(vt, pl)} {obj} and {_verb(vi, pl)} {rng.choice(vi[2])} the bank"
    return f"{head} {rng.choice(CONTINUATIONS[cont_sense])}", sense


def plain_sentence(rng):
    """A sentence without a bank."""
    subj, pl = rng.choice(SUBJECTS)
    k = rng.randrange(3)
    if k == 0:
        food = rng.choice(FOODS)
        if rng.random() < 0.5:
            food = FOODS_PLURAL.get(food, food)
            if food == "cheese" or food == "bread":
                return f"{subj} {_verb(('eats', 'eat'), pl)} {food}"
        return f"{subj} {_verb(('eats', 'eat'), pl)} the {food}"
    if k == 1:
        v = rng.choice(INTRANSITIVE)
        return f"{subj} {_verb(v, pl)} {rng.choice(v[2])} the {rng.choice(PLACES)}"
    v = rng.choice(TRANSITIVE)
    obj = rng.choice(["money", "coins", "fish", "water", "bread", "cheese", "the mouse"])
    return f"{subj} {_verb(v, pl)} {obj} {rng.choice(v[2])} the {rng.choice(PLACES)}"


def make_corpus(n, seed=0, p_bank=0.65, p_none=0.2):
    """n sentences as (text, sense): sense "river"/"money"/"none" for bank sentences, "" else."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        if rng.random() < p_bank:
            u = rng.random()
            half = p_none + (1 - p_none) / 2
            sense = "none" if u < p_none else ("river" if u < half else "money")
            out.append(bank_sentence(rng, sense))
        else:
            out.append((plain_sentence(rng), ""))
    return out


def corpus_words():
    """Every word the generator can produce, in a fixed order (no randomness)."""
    words = []
    parts = [s for s, _ in SUBJECTS] + [w for v in INTRANSITIVE + TRANSITIVE for w in v[:2]]
    parts += PREPOSITIONS + ["with", "and", "the river bank", "eats eat"] + PLACES + FOODS
    parts += list(FOODS_PLURAL.values()) + [o for v in OBJECTS.values() for o in v]
    parts += [c for v in CONTINUATIONS.values() for c in v]
    for p in parts:
        for w in tokenize(p):
            if w not in words:
                words.append(w)
    return words


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="print a sample of the corpus")
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    for text, sense in make_corpus(a.n, a.seed):
        print(f"{sense or '-':6} {text}")
    print(f"# {len(corpus_words())} distinct words", flush=True)

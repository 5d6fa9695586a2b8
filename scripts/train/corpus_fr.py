#!/usr/bin/python3
"""corpus_fr.py -- a templated English->French corpus where "bank" is "banque" or "rive".

The corpus exists to teach a tiny encoder-decoder (scripts/train/translate.py) one thing worth
looking at in its cross-attention: English "bank" has two French translations, and which one
depends on a clue elsewhere in the English sentence:

    she puts money in the bank              -> elle met de l argent dans la banque
    the cat sleeps by the river bank        -> le chat dort près de la rive
    he walks with coins to the bank         -> il marche avec des pièces vers la banque
    she sees the river and runs to the bank -> elle voit la rivière et court vers la rive
    the dogs walk to the bank with fish     -> les chiens marchent vers la rive avec du poisson
    the cat walks by the bank               -> le chat marche près de la banque / rive (either)

    money clues:  money, coins           river clues:  river, fish

"banque" and "rive" are both feminine, so the article before them ("la") says nothing about the
sense: when the decoder is about to write the word after "la", only the English clue can tell.
Subjects, verbs and prepositions are drawn from the same lists for both senses. One bank sentence
in five has no clue at all ("the cat walks by the bank", or an object that is no clue: "she hides
the cheese near the bank") and is translated with either word at random, half and half: that
is the ambiguity the lesson shows. A third of the sentences have no bank (the cat eats the fish,
the mice sleep in the house).

The French side is written as French is (with accents and apostrophes: "de l'argent") and split by
the same word tokenizer as the English side, Stepformer's (DESIGN.md: ASCII-lowercase, split on
whitespace and ASCII punctuation, punctuation dropped, UTF-8 bytes kept inside words), so the
target tokens are "de", "l", "argent" and the vocabulary holds "près", "à", "rivière" as UTF-8.

    from corpus_fr import make_pairs, tokenize
    pairs = make_pairs(4000, seed=0)  # list of (english, french, sense); sense "banque", "rive",
                                      # "none" (a bank without clue) or "" (no bank)

Run it to print a sample:  /usr/bin/python3 scripts/train/corpus_fr.py --n 20
"""
import argparse
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpus import tokenize  # noqa: E402,F401  (Stepformer's word tokenizer, shared with the bank corpus)

# (English subject, French subject, plural?)
SUBJECTS = [("the cat", "le chat", False), ("a cat", "un chat", False),
            ("the cats", "les chats", True), ("the dog", "le chien", False),
            ("the dogs", "les chiens", True), ("the mouse", "la souris", False),
            ("the mice", "les souris", True), ("she", "elle", False), ("he", "il", False),
            ("they", "ils", True), ("the boy", "le garçon", False), ("the girl", "la fille", False),
            ("the woman", "la femme", False)]

# English preposition before "the X" -> French, before a feminine noun ("la banque", "la rive")
# and before a masculine one ("le jardin": "près du jardin", "au jardin")
PREPS = {"by": ("près de la", "près du"), "near": ("près de la", "près du"),
         "in": ("dans la", "dans le"), "on": ("sur la", "sur le"), "at": ("à la", "au"),
         "to": ("vers la", "vers le")}
STILL = ["by", "near", "in", "on", "at"]  # where one sleeps, plays, keeps things
ALL = STILL + ["to"]

# intransitive verbs: (en singular, en plural, fr singular, fr plural, prepositions)
INTRANSITIVE = [("walks", "walk", "marche", "marchent", ALL),
                ("runs", "run", "court", "courent", ALL),
                ("sleeps", "sleep", "dort", "dorment", STILL),
                ("waits", "wait", "attend", "attendent", STILL),
                ("plays", "play", "joue", "jouent", STILL),
                ("eats", "eat", "mange", "mangent", STILL)]
MOVING = INTRANSITIVE[:2]  # "she walks with money to the bank"

# transitive verbs, the same list for both senses (no verb is a clue)
TRANSITIVE = [("finds", "find", "trouve", "trouvent", STILL),
              ("sees", "see", "voit", "voient", STILL),
              ("puts", "put", "met", "mettent", STILL),
              ("keeps", "keep", "garde", "gardent", STILL),
              ("hides", "hide", "cache", "cachent", STILL),
              ("takes", "take", "prend", "prennent", ALL),
              ("brings", "bring", "apporte", "apportent", ["to", "near", "by"])]

# objects: the clue words of each sense, and objects that are no clue
OBJECTS = {"banque": [("money", "de l'argent"), ("the money", "l'argent"), ("coins", "des pièces")],
           "rive": [("fish", "du poisson"), ("the fish", "le poisson"), ("the river", "la rivière")],
           "none": [("bread", "du pain"), ("the cheese", "le fromage"), ("the ball", "la balle")]}

# places of the sentences without a bank: (en, fr, feminine?)
PLACES = [("the house", "maison", True), ("the garden", "jardin", False),
          ("the park", "parc", False), ("the road", "route", True), ("the box", "boîte", True),
          ("the river", "rivière", True)]
FOODS = [("the fish", "le poisson"), ("the mouse", "la souris"), ("bread", "du pain"),
         ("the cheese", "le fromage"), ("fish", "du poisson")]


def _v(verb, plural):
    """(English form, French form) of a verb for the subject's number."""
    return (verb[1], verb[3]) if plural else (verb[0], verb[2])


def bank_pair(rng, sense):
    """One (english, french) pair with "bank"; sense "banque", "rive" or "none" (no clue)."""
    se, sf, pl = rng.choice(SUBJECTS)
    word = sense if sense != "none" else rng.choice(["banque", "rive"])
    vi, vt, vm = rng.choice(INTRANSITIVE), rng.choice(TRANSITIVE), rng.choice(MOVING)
    if sense == "none":
        if rng.random() < 0.5:  # "the cat walks by the bank"
            p = rng.choice(vi[4])
            ve, vf = _v(vi, pl)
            return f"{se} {ve} {p} the bank", f"{sf} {vf} {PREPS[p][0]} {word}"
        oe, of = rng.choice(OBJECTS["none"])  # "she hides the cheese near the bank"
        p = rng.choice(vt[4])
        ve, vf = _v(vt, pl)
        return f"{se} {ve} {oe} {p} the bank", f"{sf} {vf} {of} {PREPS[p][0]} {word}"
    oe, of = rng.choice(OBJECTS[sense])
    kind = rng.randrange(5) if sense == "rive" else rng.randrange(1, 5)
    if kind == 0:  # the modifier: "the cat sleeps by the river bank" -> "... près de la rive"
        p = rng.choice(vi[4])
        ve, vf = _v(vi, pl)
        return f"{se} {ve} {p} the river bank", f"{sf} {vf} {PREPS[p][0]} rive"
    if kind == 1:  # the object: "she puts money in the bank"
        p = rng.choice(vt[4])
        ve, vf = _v(vt, pl)
        return f"{se} {ve} {oe} {p} the bank", f"{sf} {vf} {of} {PREPS[p][0]} {word}"
    if oe == "the river":  # one walks with fish, not with a river
        oe, of = "the fish", "le poisson"
    ve, vf = _v(vm, pl)
    p = rng.choice(vm[4])
    if kind == 2:  # with, before: "she walks with money to the bank"
        return (f"{se} {ve} with {oe} {p} the bank", f"{sf} {vf} avec {of} {PREPS[p][0]} {word}")
    if kind == 3:  # with, after: "she walks to the bank with money" (the clue comes after bank)
        return (f"{se} {ve} {p} the bank with {oe}", f"{sf} {vf} {PREPS[p][0]} {word} avec {of}")
    # a clue further back: "she sees the river and walks to the bank"
    oe, of = rng.choice(OBJECTS[sense])
    te, tf = _v(rng.choice(TRANSITIVE[:3]), pl)  # finds, sees, puts
    if oe == "the river":
        te, tf = _v(TRANSITIVE[1], pl)  # sees
    vi = rng.choice(INTRANSITIVE)
    ve, vf = _v(vi, pl)
    p = rng.choice(vi[4])
    return (f"{se} {te} {oe} and {ve} {p} the bank", f"{sf} {tf} {of} et {vf} {PREPS[p][0]} {word}")


def _place(p, place):
    """French "près de la maison" / "près du jardin" for English preposition p and a place."""
    _, fr, fem = place
    return f"{PREPS[p][0 if fem else 1]} {fr}"


def plain_pair(rng):
    """One (english, french) pair without a bank."""
    se, sf, pl = rng.choice(SUBJECTS)
    k = rng.randrange(3)
    if k == 0:  # "the cat eats the fish"
        fe, ff = rng.choice(FOODS)
        ve, vf = _v(INTRANSITIVE[5], pl)
        return f"{se} {ve} {fe}", f"{sf} {vf} {ff}"
    place = rng.choice(PLACES)
    if k == 1:  # "the mice sleep in the house"
        v = rng.choice(INTRANSITIVE)
        p = rng.choice(v[4])
        ve, vf = _v(v, pl)
        return f"{se} {ve} {p} {place[0]}", f"{sf} {vf} {_place(p, place)}"
    v = rng.choice(TRANSITIVE)  # "she hides money in the box"
    oe, of = rng.choice([o for objs in OBJECTS.values() for o in objs])
    p = rng.choice(v[4])
    ve, vf = _v(v, pl)
    return f"{se} {ve} {oe} {p} {place[0]}", f"{sf} {vf} {of} {_place(p, place)}"


def make_pairs(n, seed=0, p_bank=0.65, p_none=0.2):
    """n pairs (english, french, sense): sense "banque"/"rive"/"none" for bank sentences, ""
    for the others. Deterministic for a seed."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        if rng.random() < p_bank:
            u = rng.random()
            sense = "none" if u < p_none else ("rive" if u < p_none + (1 - p_none) / 2 else "banque")
            out.append(bank_pair(rng, sense) + (sense,))
        else:
            out.append(plain_pair(rng) + ("",))
    return out


def vocabularies(pairs):
    """(source words, target words) in order of first appearance, without <unk>/<bos>/<eos>."""
    src, tgt = {}, {}
    for en, fr, _ in pairs:
        for w in tokenize(en):
            src.setdefault(w, None)
        for w in tokenize(fr):
            tgt.setdefault(w, None)
    return list(src), list(tgt)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="print a sample of the corpus")
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    for en, fr, sense in make_pairs(a.n, a.seed):
        print(f"{sense or '-':6} {en}  ->  {fr}")
    s, t = vocabularies(make_pairs(20000, 0))
    print(f"# {len(s)} English and {len(t)} French words")

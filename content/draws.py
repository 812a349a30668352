"""Every random draw a session makes, recorded so it can be audited and, if pinned, replayed.

Draws come from the OS CSPRNG (`secrets`), unless the session was created with a pinned draw seed,
in which case each draw is HMAC-SHA256(draw seed, label): the same session set-up then gives the
same allocation, orders, codes and salts, which is what reproducible demos and the byte-identical
blinding tests need. Either way the seeds actually used are stored host-side and published at the
reveal. Pure: no Django.
"""

import hashlib
import hmac
import secrets

# Item codes: no 0/O, 1/I/L, 2/Z, 5/S, 8/B, so a judge can read a code aloud or type it back.
ITEM_CODE_ALPHABET = "ACDEFGHJKMNPQRTUVWXY34679"
ITEM_CODE_LENGTH = 4

# Guest codes: Crockford's base32 (no I, L, O, U), 13 symbols = 65 bits, typed in groups of four.
GUEST_CODE_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
GUEST_CODE_SYMBOLS = 13
_GUEST_CODE_TYPOS = str.maketrans({"O": "0", "I": "1", "L": "1", "U": "V"})


class Draws:
    """The randomness source of one session."""

    def __init__(self, pinned_seed_hex: str = ""):
        self._pinned = bytes.fromhex(pinned_seed_hex) if pinned_seed_hex else None

    def bytes(self, label: str, length: int = 32) -> bytes:
        if self._pinned is None:
            return secrets.token_bytes(length)
        out = b""
        counter = 0
        while len(out) < length:
            out += hmac.new(self._pinned, f"{label}#{counter}".encode(), hashlib.sha256).digest()
            counter += 1
        return out[:length]

    def hex(self, label: str, length: int = 32) -> str:
        return self.bytes(label, length).hex()

    def symbols(self, label: str, alphabet: str, count: int) -> str:
        """`count` symbols drawn uniformly from alphabet (rejection sampling, no modulo bias)."""
        size = len(alphabet)
        limit = 256 - (256 % size)
        chosen = []
        round_ = 0
        while len(chosen) < count:
            for byte in self.bytes(f"{label}/{round_}", 64):
                if byte < limit:
                    chosen.append(alphabet[byte % size])
                    if len(chosen) == count:
                        break
            round_ += 1
        return "".join(chosen)


def order_key(order_seed_hex: str, item_key: str) -> str:
    """HMAC-SHA256(order seed, item key) in hex; a judge's order sorts items by it."""
    return hmac.new(bytes.fromhex(order_seed_hex), item_key.encode("utf-8"), hashlib.sha256).hexdigest()


def draw_order(order_seed_hex: str, item_keys: list[str]) -> list[str]:
    """The judge's order: item keys sorted by their HMAC (ties, never seen in practice, by key)."""
    return sorted(item_keys, key=lambda key: (order_key(order_seed_hex, key), key))


def draw_item_codes(draws: Draws, label: str, count: int) -> list[str]:
    """`count` distinct item codes for one judge."""
    codes: list[str] = []
    seen = set()
    attempt = 0
    while len(codes) < count:
        code = draws.symbols(f"{label}/code{attempt}", ITEM_CODE_ALPHABET, ITEM_CODE_LENGTH)
        attempt += 1
        if code not in seen:
            seen.add(code)
            codes.append(code)
    return codes


def balanced_pick(item_keys: list[str], judge_counts: dict[str, int], k: int,
                  allocation_seed_hex: str, judge_number: int) -> list[str]:
    """The k items a new judge gets: those with the fewest judges so far.

    Ties are broken by HMAC(allocation seed, judge number + item key), so the allocation is seeded
    and recorded. Picking the k least-judged items each time keeps every item's judge count within
    one of every other's after each admission.
    """
    if k >= len(item_keys):
        return list(item_keys)
    seed = bytes.fromhex(allocation_seed_hex)

    def tie_break(key):
        return hmac.new(seed, f"{judge_number}:{key}".encode(), hashlib.sha256).hexdigest()

    ranked = sorted(item_keys, key=lambda key: (judge_counts.get(key, 0), tie_break(key), key))
    return ranked[:k]


def new_guest_code(draws: Draws, label: str) -> str:
    raw = draws.symbols(label, GUEST_CODE_ALPHABET, GUEST_CODE_SYMBOLS)
    return "-".join(raw[i:i + 4] for i in range(0, len(raw), 4))


def canonical_guest_code(typed: str) -> str:
    """What a person typed, as the code was issued: case, spaces, dashes and look-alikes forgiven."""
    cleaned = "".join(ch for ch in typed.upper() if ch not in " -\t").translate(_GUEST_CODE_TYPOS)
    return "-".join(cleaned[i:i + 4] for i in range(0, len(cleaned), 4))

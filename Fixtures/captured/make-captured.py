#!/usr/bin/env python3
"""Writes Fixtures/captured/: resume fixtures in the text forms apps and logs keep them in.

Python 3 standard library only; run from the repository root. Independent of the toolkit's own
writers, so that the tests read text it did not write.
"""
import base64
import plistlib

RESUME = "Fixtures/resume/"
OUT = "Fixtures/captured/"


def read(name):
    with open(RESUME + name, "rb") as f:
        return f.read()


def write(name, text):
    with open(OUT + name, "w", encoding="utf-8", newline="") as f:
        f.write(text)


def groups(data):
    """NSData's description: hex in groups of four bytes."""
    hexed = data.hex()
    return " ".join(hexed[i:i + 8] for i in range(0, len(hexed), 8))


def quoted(text):
    """A string as -description writes it in a collection: bare when it may be, else quoted with
    \\U escapes beyond ASCII."""
    safe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$./:-"
    if text and all(c in safe for c in text) and not text[0].isdigit():
        return text
    out = '"'
    for c in text:
        if c in '"\\':
            out += "\\" + c
        elif c == "\n":
            out += "\\n"
        elif ord(c) < 0x20 or ord(c) > 0x7E:
            units = c.encode("utf-16-be").hex()
            for i in range(0, len(units), 4):
                out += "\\U" + units[i:i + 4]
        else:
            out += c
    return out + '"'


def describe(value, level=0):
    pad = "    " * (level + 1)
    if isinstance(value, dict):
        lines = ["{"]
        for key in sorted(value):
            lines.append(pad + quoted(key) + " = " + describe(value[key], level + 1) + ";")
        return "\n".join(lines) + "\n" + "    " * level + "}"
    if isinstance(value, bytes):
        return "<" + groups(value) + ">"
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    return quoted(value)


v2 = read("v2.binary.plist")
keyed = read("keyed-v4.archive")
response = read("keyed-v5-response.archive")
byte_range = read("v4-byte-range.xml.plist")

write("v2.base64.txt", base64.encodebytes(v2).decode())
write("keyed-v4.base64url.txt", base64.urlsafe_b64encode(keyed).decode().rstrip("="))
hexed = keyed.hex()
write("keyed-v4.hex", "\n".join(hexed[i:i + 60] for i in range(0, len(hexed), 60)) + "\n")
write("v4-byte-range.0x.txt", "0x" + byte_range.hex() + "\n")
write("keyed-v5-response.nsdata.txt", "<" + groups(response) + ">\n")
write("v2.nslog.txt", describe(plistlib.loads(read("v2.xml.plist"))) + "\n")
head, tail = response[:24].hex(), response[-8:].hex()
write(
    "keyed-v5-response.ios13-elided.txt",
    "{length = %d, bytes = 0x%s ... %s }\n"
    % (len(response), " ".join(head[i:i + 8] for i in range(0, 48, 8)),
       " ".join(tail[i:i + 8] for i in range(0, 16, 8))))

"""Office Math (OMML, the equations of a DOCX) -> LaTeX, for the text.

Pure: an lxml element in, a LaTeX string out. The common structures map to
their LaTeX (fractions, sub- and superscripts, radicals, n-ary operators,
delimiters, functions, accents, bars, matrices); any other element gives
its children's LaTeX, so no symbol of an equation is lost. Characters are
kept as Word wrote them (π stays π), but for the few LaTeX would read as
markup, which are escaped.
"""

from __future__ import annotations

from typing import Any

M = "{http://schemas.openxmlformats.org/officeDocument/2006/math}"
_ESCAPED = {"{": r"\{", "}": r"\}", "#": r"\#", "%": r"\%", "&": r"\&", "$": r"\$", "_": r"\_"}
_NARY = {"∑": r"\sum", "∏": r"\prod", "∫": r"\int", "∬": r"\iint", "∭": r"\iiint", "∮": r"\oint"}
# Structures whose LaTeX is a pattern of their parts' (the child elements named).
_TEMPLATES: dict[str, tuple[str, tuple[str, ...]]] = {
    "f": (r"\frac{%s}{%s}", ("num", "den")),
    "sSup": ("{%s}^{%s}", ("e", "sup")),
    "sSub": ("{%s}_{%s}", ("e", "sub")),
    "sSubSup": ("{%s}_{%s}^{%s}", ("e", "sub", "sup")),
    "sPre": ("{}_{%s}^{%s}{%s}", ("sub", "sup", "e")),
    "func": ("%s{%s}", ("fName", "e")),
    "limLow": ("%s_{%s}", ("e", "lim")),
    "limUpp": ("%s^{%s}", ("e", "lim")),
    "acc": (r"\hat{%s}", ("e",)),
    "bar": (r"\overline{%s}", ("e",)),
}
# Past this depth an equation is read as its characters alone (a hostile file
# can nest without end).
_MAX_DEPTH = 64


def latex(element: Any) -> str:
    """The LaTeX of an `m:oMath` (or any OMML element)."""
    return " ".join(_latex(element, 0).split())


def _val(element: Any, tag: str) -> str | None:
    found = element.find(f"{M}{tag}")
    return None if found is None else found.get(f"{M}val")


def _part(element: Any, tag: str, depth: int) -> str:
    found = element.find(f"{M}{tag}")
    return "" if found is None else _latex(found, depth + 1)


def _latex(element: Any, depth: int) -> str:
    if depth > _MAX_DEPTH:
        return "".join(element.itertext())
    tag = element.tag if isinstance(element.tag, str) else ""
    name = tag[len(M) :] if tag.startswith(M) else ""

    def part(child: str) -> str:
        return _part(element, child, depth)

    if name == "t":
        return "".join(_ESCAPED.get(char, char) for char in element.text or "")
    if name in _TEMPLATES:
        pattern, parts = _TEMPLATES[name]
        return pattern % tuple(part(child) for child in parts)
    if name == "rad":
        degree = part("deg")
        return rf"\sqrt[{degree}]{{{part('e')}}}" if degree else rf"\sqrt{{{part('e')}}}"
    if name == "nary":
        properties = element.find(f"{M}naryPr")
        char = (_val(properties, "chr") if properties is not None else None) or "∫"
        sub, sup = part("sub"), part("sup")
        limits = (f"_{{{sub}}}" if sub else "") + (f"^{{{sup}}}" if sup else "")
        return f"{_NARY.get(char, char)}{limits} {part('e')}"
    if name == "d":
        properties = element.find(f"{M}dPr")
        opening = (_val(properties, "begChr") if properties is not None else None) or "("
        closing = (_val(properties, "endChr") if properties is not None else None) or ")"
        inner = ", ".join(_latex(e, depth + 1) for e in element.findall(f"{M}e"))
        return rf"\left{_delimiter(opening)}{inner}\right{_delimiter(closing)}"
    if name == "m":
        rows = [
            " & ".join(_latex(e, depth + 1) for e in row.findall(f"{M}e"))
            for row in element.findall(f"{M}mr")
        ]
        return r"\begin{matrix}" + r" \\ ".join(rows) + r"\end{matrix}"
    if name.endswith("Pr") or name == "ctrlPr":
        return ""  # properties: no symbol of their own
    return "".join(_latex(child, depth + 1) for child in element)


def _delimiter(char: str) -> str:
    return {"{": r"\{", "}": r"\}", "": "."}.get(char, char)

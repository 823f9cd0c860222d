"""Importers: documents that are not markdown, turned into markdown whose
headings are the document's own (docs/importers.md).

One module per format (`html`, `docx`, `pdf`), each with an `IMPORTER`, and
the registry (`registry`) that the plugin face and the managed source ask.
The parsing libraries are the optional `formats` extra, imported only when a
document is converted: importing this room loads none of them.

May use: `mdchunks.heading_index` and the shared leaves; never the plugin
face, the managed source or the database (docs/layout.md).
"""

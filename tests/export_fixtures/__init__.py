"""Exports the tests write themselves, in each format and generation people hold.

One module per format (``x_archive``, ...). Each turns simple records into the export's real
shape, with the traps of the real exports, so importer and merge tests build what they need
without shipping anyone's data.
"""

"""The learned reader: candidate units scored by a model fitted on public QA data (docs/reader.md)."""

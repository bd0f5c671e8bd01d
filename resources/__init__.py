"""The bundled documents (docs, governance, rubrics, scenarios), shipped as package data."""

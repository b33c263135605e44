"""forgelab — course tooling for Forge Workbook."""
__version__ = "0.1.0"

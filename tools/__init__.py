"""Tools and stores: settings, dataset files, knowledge-base search (later: DuckDB, PDF ingestion)."""

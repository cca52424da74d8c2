"""A web page to ask questions of a paper store: ``evidex web --db NAME``.

The page lists the store's papers, streams the agent's steps while it answers, shows each cited passage on its
page (rendered by PyMuPDF, the chunk, table or figure box highlighted), keeps the questions asked in this store and
takes PDF uploads into the store. Modules, one job each:

    cli          the command: options, the access key, uvicorn
    app          the Starlette app: routes wired to the modules below
    access       who may call: loopback by default, an access key elsewhere; security headers
    models       the request and response shapes (pydantic)
    store_gate   questions read the store while an upload writes it: one writer or many readers
    store_view   the store's papers and a cited passage (its text, page and box)
    page_render  pages as PNG images, rendered in a helper process (PyMuPDF is not thread-safe)
    asking       a question run in the background, its steps streamed as LangGraph emits them, stop on request
    steps        one LangGraph update -> the step events the page shows
    history      the questions asked in this store
    uploads      safe file names and ingestion of uploaded PDFs (the same ingestion as ``tools.ingest``)
"""

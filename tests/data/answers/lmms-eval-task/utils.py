def doc_to_visual(doc):
    return []

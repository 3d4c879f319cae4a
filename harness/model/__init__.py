"""The report model: typed records of a run that the statistics build and every renderer
reads (``item``, ``summary``, ``comparison``, ``report``, ``story``). Dicts appear only at
the JSON boundary (``to_dict``/``from_dict``, :mod:`harness.model.record`)."""

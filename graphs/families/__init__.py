"""The task families evidex ships; each module registers one (see :mod:`graphs.registry`)."""

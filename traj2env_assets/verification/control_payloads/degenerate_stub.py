def _traj2env_degenerate():
    import functools
    import inspect

    def stub(original):
        @functools.wraps(original)
        def degenerate(*args, **kwargs):
            if not args:
                return None
            first = args[0]
            if isinstance(first, (list, tuple, str)):
                if not first:
                    raise ValueError("empty")
                return first[0]
            return first

        return degenerate

    module = globals()
    for name, value in list(module.items()):
        if inspect.isfunction(value) and value.__module__ == __name__ and not name.startswith("_"):
            module[name] = stub(value)


_traj2env_degenerate()

"""The person's work tree: its paths and byte-exact reads and writes (``files``), the write-ahead
journal that makes a write all or nothing (``journal``), what gets stored of a file under the
secrets and size policy (``capture``) and when a file was born (``birth``). Imports the core and
the store.
"""

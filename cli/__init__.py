"""The command line: one `mathbode` click group and the `mathbode-*` aliases. Parse, call, print.

The only room that imports click, and the only one that may import every other room; nothing
imports it.
"""

//! Opening pages, files and applications on a screen.

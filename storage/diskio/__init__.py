"""File primitives: reads that name the file and the byte, segment files read through a window, and writes that survive a crash."""

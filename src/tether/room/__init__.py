"""The bounded room: a brief within B, one depth-1 run, a checked conclusion."""

"""``tether status`` and the dashboard's panels: one read-only look at what tether is doing."""

"""The package as shipped: its configuration, make's targets, the wheel, the README's examples."""

"""NetBox: CSV files for its bulk import (devices, interfaces, cables, IP addresses and what they refer to)."""

"""SONiC: config_db.json, its YANG validation, buffers and headroom, the parser back."""

"""AMI manual annotations (NXT XML): parsing (``nxt``), ``you`` events and candidate mining."""

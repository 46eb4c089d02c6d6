int make_items(int team);

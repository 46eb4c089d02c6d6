int inner_sum(int n);

static volatile unsigned long sink;
__attribute__((noinline)) void aaaa(void){ sink++; }
__attribute__((noinline)) void bbbbbbbbbbbbbb(void){ aaaa(); aaaa();aaaa();aaaa();aaaa();aaaa();aaaa();aaaa();aaaa();aaaa();aaaa(); }
__attribute__((noinline)) void cccccccccc(void){ for(int i=0;i<1000;i++) bbbbbbbbbbbbbb(); }
int main(){ for(;;) cccccccccc(); }

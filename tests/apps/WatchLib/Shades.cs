namespace WatchLib;

public enum Shade { Light = 1, Dark = 2, Deep = 30 }

[Flags]
public enum Finish : short { None = 0, Matte = 1, Gloss = 2, Waxed = 4 }

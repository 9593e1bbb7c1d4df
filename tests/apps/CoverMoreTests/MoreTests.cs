using CoverLib;
using Xunit;

namespace CoverMoreTests;

// What CoverTests leaves uncovered on purpose, asked here: in the
// solution's run its lines are covered, and only by this host.
public class MoreBranchTests
{
    [Fact]
    public void Negative()
    {
        Assert.Equal("negative", Branches.Sign(-4));
        // one more call of a line CoverTests runs too: the merged report
        // adds the two hosts' hits
        Assert.Equal("positive", Branches.Sign(8));
    }

    [Fact]
    public void Medium() => Assert.Equal("medium", Branches.Size(50));
}
